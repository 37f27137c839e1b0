//go:build e2e

package e2e

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// chartDeployCases: the Go runtime, sockets, replicas and scheduling, the
// Service's options and the ServiceMonitor.
func chartDeployCases() []chartCase {
	return []chartCase{
		{
			name: "go-runtime-and-multisocket",
			values: `domain: example.com
watchedResources: [Service]
multisocket: 2
goRuntime: {gc: "200"}
resources: {limits: {memory: 1Gi}}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				if got, want := cf[0].dirs["multisocket"], [][]string{{"multisocket", "2"}}; !reflect.DeepEqual(got, want) {
					t.Errorf("multisocket: got %q, want %q", got, want)
				}
				c := chartGet[appsv1.Deployment](t, m, "Deployment", "").Spec.Template.Spec.Containers[0]
				want := []corev1.EnvVar{{Name: "GOMEMLIMIT", Value: "966367641"}, {Name: "GOGC", Value: "200"}}
				if !reflect.DeepEqual(c.Env, want) {
					t.Errorf("env %+v, want %+v", c.Env, want)
				}
				// An explicit GOMEMLIMIT wins; no memory limit, no GOMEMLIMIT.
				c = chartGet[appsv1.Deployment](t, chartRender(t, ns, "domain: example.com\ngoRuntime: {memLimit: 300MiB}\n"), "Deployment", "").Spec.Template.Spec.Containers[0]
				if want := []corev1.EnvVar{{Name: "GOMEMLIMIT", Value: "300MiB"}}; !reflect.DeepEqual(c.Env, want) {
					t.Errorf("env with memLimit %+v, want %+v", c.Env, want)
				}
				c = chartGet[appsv1.Deployment](t, chartRender(t, ns, "domain: example.com\nresources: {limits: null}\n"), "Deployment", "").Spec.Template.Spec.Containers[0]
				if len(c.Env) != 0 {
					t.Errorf("env without a memory limit %+v, want none", c.Env)
				}
			},
		},
		{
			name: "replicas-pdb-scheduling",
			values: `domain: example.com
replicaCount: 2
priorityClassName: system-cluster-critical
nodeSelector: {kubernetes.io/os: linux}
tolerations: [{key: CriticalAddonsOnly, operator: Exists}]
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: ScheduleAnyway
    labelSelector: {matchLabels: {app.kubernetes.io/instance: "{{ .Release.Name }}"}}
imagePullSecrets: [{name: registry}]
image: {registry: registry.example.com, repository: dns/k8s-gateway, tag: v9.9.9}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				d := chartGet[appsv1.Deployment](t, m, "Deployment", "")
				pdb := chartGet[policyv1.PodDisruptionBudget](t, m, "PodDisruptionBudget", "k8s-gateway")
				if *d.Spec.Replicas != 2 || pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 ||
					!reflect.DeepEqual(pdb.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels) {
					t.Errorf("replicas %d, PDB %+v", *d.Spec.Replicas, pdb.Spec)
				}
				pod := d.Spec.Template.Spec
				if pod.PriorityClassName != "system-cluster-critical" || pod.NodeSelector["kubernetes.io/os"] != "linux" ||
					len(pod.Tolerations) != 1 || len(pod.ImagePullSecrets) != 1 ||
					pod.Containers[0].Image != "registry.example.com/dns/k8s-gateway:v9.9.9" ||
					len(pod.TopologySpreadConstraints) != 1 ||
					pod.TopologySpreadConstraints[0].LabelSelector.MatchLabels["app.kubernetes.io/instance"] != "k8s-gateway" {
					t.Errorf("pod spec %+v", pod)
				}
			},
		},
		{
			name: "service-options",
			values: `domain: example.com
service:
  useTcp: false
  loadBalancerClass: example.com/lb
  externalTrafficPolicy: Local
  ipFamilyPolicy: PreferDualStack
  annotations: {example.com/owner: dns-team}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				svc := chartGet[corev1.Service](t, m, "Service", "")
				if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Protocol != corev1.ProtocolUDP ||
					svc.Spec.LoadBalancerClass == nil || *svc.Spec.LoadBalancerClass != "example.com/lb" ||
					svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal ||
					svc.Annotations["example.com/owner"] != "dns-team" {
					t.Errorf("Service %+v %+v", svc.ObjectMeta, svc.Spec)
				}
			},
		},
		{
			name:   "servicemonitor",
			values: "domain: example.com\nserviceMonitor: {enabled: true, labels: {release: prometheus}}\n",
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				sm := chartGet[map[string]any](t, m, "ServiceMonitor", "k8s-gateway")
				metrics := chartGet[corev1.Service](t, m, "Service", "k8s-gateway-metrics")
				spec := sm["spec"].(map[string]any)
				ep := spec["endpoints"].([]any)[0].(map[string]any)
				sel := spec["selector"].(map[string]any)["matchLabels"].(map[string]any)
				for k, v := range sel {
					if metrics.Labels[k] != v {
						t.Errorf("ServiceMonitor selects %s=%v, the metrics Service has %q", k, v, metrics.Labels[k])
					}
				}
				if ep["port"] != "metrics" || metrics.Spec.Type != corev1.ServiceTypeClusterIP ||
					metrics.Spec.Ports[0].Name != "metrics" || metrics.Spec.Ports[0].Port != 9153 ||
					sm["metadata"].(map[string]any)["labels"].(map[string]any)["release"] != "prometheus" {
					t.Errorf("ServiceMonitor %v, metrics Service %+v", sm, metrics.Spec)
				}
				// The DNS Service does not expose the metrics.
				if svc := chartGet[corev1.Service](t, m, "Service", "k8s-gateway"); len(svc.Spec.Ports) != 2 {
					t.Errorf("DNS Service ports %+v", svc.Spec.Ports)
				}
			},
		},
	}
}
