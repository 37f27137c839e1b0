//go:build e2e

package e2e

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// chartFleetCases: several clusters, priorities, steering, tenancy and health.
func chartFleetCases() []chartCase {
	return []chartCase{
		{
			name: "fleet",
			values: `domain: example.com
watchedResources: [Service]
fleet:
  clusters:
  - {name: prod, kubeconfigSecret: prod-kubeconfig, subdomain: true}
  clusterAPI: {enabled: true, namespaces: ["{{ns}}"]}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "").Data["Corefile"]
				for _, want := range []string{"clusterapi " + ns + "\n", "cluster local\n", "cluster prod {\n", "kubeconfig /etc/k8s-gateway/clusters/prod/value\n", "subdomain\n"} {
					if !strings.Contains(cm, want) {
						t.Errorf("Corefile without %q:\n%s", want, cm)
					}
				}
				pod := chartGet[appsv1.Deployment](t, m, "Deployment", "").Spec.Template.Spec
				if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
					return v.Name == "kubeconfig-prod" && v.Secret != nil && v.Secret.SecretName == "prod-kubeconfig"
				}) {
					t.Errorf("volumes %+v, want the Secret prod-kubeconfig", pod.Volumes)
				}
				if !slices.ContainsFunc(pod.Containers[0].VolumeMounts, func(vm corev1.VolumeMount) bool {
					return vm.Name == "kubeconfig-prod" && vm.MountPath == "/etc/k8s-gateway/clusters/prod" && vm.ReadOnly
				}) {
					t.Errorf("volume mounts %+v", pod.Containers[0].VolumeMounts)
				}
				role := chartGet[rbacv1.Role](t, m, "Role", "k8s-gateway-clusterapi")
				want := chartReadOnly("cluster.x-k8s.io/clusters", "/secrets")
				slices.Sort(want)
				if got := chartRuleSet(t, role.Rules); role.Namespace != ns || !slices.Equal(got, want) {
					t.Errorf("Role %s/%s rules %q, want %s/%q", role.Namespace, role.Name, got, ns, want)
				}
				cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "")
				if got := chartRuleSet(t, cr.Rules); slices.Contains(got, "/secrets:list,watch") {
					t.Errorf("ClusterRole rules %q grant secrets", got)
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				// Both cluster blocks read the test cluster here: local into the
				// zone, prod under its subdomain.
				lbServiceAt(t, kubeconfig, ns, "web", "", "192.0.2.151")
				for _, name := range []string{"web." + ns + ".example.com.", "web." + ns + ".prod.example.com."} {
					s.eventually(t, 15*time.Second, name, dns.TypeA, positive(name+" 60 IN A 192.0.2.151"))
				}
			},
		},
		{
			name: "fleet-priorities",
			values: `domain: example.com
watchedResources: [Service]
health: {enabled: true}
fleet:
  localPriority: 1
  failover: 30s
  clusters:
  - {name: prod, kubeconfigSecret: prod-kubeconfig, priority: 2}
  clusterAPI: {enabled: true, namespaces: ["{{ns}}"]} # the harness's block kubeconfig needs it
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "").Data["Corefile"]
				for _, want := range []string{"health\n", "failover 30s\n", "cluster local {\n            priority 1\n        }\n", "cluster prod {\n", "priority 2\n"} {
					if !strings.Contains(cm, want) {
						t.Errorf("Corefile without %q:\n%s", want, cm)
					}
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				// Both cluster blocks read the test cluster: local (priority 1) answers.
				lbServiceAt(t, kubeconfig, ns, "web", "", "192.0.2.152")
				name := "web." + ns + ".example.com."
				s.eventually(t, 15*time.Second, name, dns.TypeA, positive(name+" 60 IN A 192.0.2.152"))
			},
		},
		{
			name: "fleet-steering",
			values: `domain: example.com
watchedResources: [Service]
steering: {defaultLocation: continent=EU}
fleet:
  localWeight: 3
  localLocation: continent=EU country=DE
  clusters:
  - {name: prod, kubeconfigSecret: prod-kubeconfig, weight: 1, location: continent=NA country=US}
  clusterAPI: {enabled: true, namespaces: ["{{ns}}"]} # the harness's block kubeconfig needs it
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "").Data["Corefile"]
				for _, want := range []string{"default_location continent=EU\n", "cluster local {\n            weight 3\n            location continent=EU country=DE\n        }\n",
					"cluster prod {\n", "weight 1\n", "location continent=NA country=US\n"} {
					if !strings.Contains(cm, want) {
						t.Errorf("Corefile without %q:\n%s", want, cm)
					}
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				// Both cluster blocks read the test cluster: one address, which both give.
				lbServiceAt(t, kubeconfig, ns, "web", "", "192.0.2.153")
				name := "web." + ns + ".example.com."
				s.eventually(t, 15*time.Second, name, dns.TypeA, positive(name+" 60 IN A 192.0.2.153"))
			},
		},
		{
			name: "tenancy",
			values: `domain: example.com
watchedResources: [Service]
tenancy:
  ownership: delegated
  delegate:
    team-a: [team-a.example.com, shop.example.com]
  events: true
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				_, opts := cf[0].gateway(t)
				want := map[string][]string{
					"resources": {"Service"},
					"ttl":       {"60"},
					"apex":      {"k8s-gateway." + ns},
					"ownership": {"delegated"},
					"delegate":  {"team-a", "team-a.example.com", "shop.example.com"},
					"events":    {},
				}
				if !reflect.DeepEqual(opts, want) {
					t.Errorf("k8s_gateway options:\n got %q\nwant %q", opts, want)
				}
				// Namespaces for their domains, events to tell tenants: nothing more.
				cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "")
				wantRules := append(chartReadOnly("/services", "/namespaces"), "/events:create,patch")
				slices.Sort(wantRules)
				if got := chartRuleSet(t, cr.Rules); !slices.Equal(got, wantRules) {
					t.Errorf("ClusterRole rules %q, want %q", got, wantRules)
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive("example.com. 60 IN NS k8s-gateway."+ns+".example.com."))
			},
		},
		{
			name: "health",
			values: `domain: example.com
watchedResources: [Service, Ingress]
health: {enabled: true}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				_, opts := cf[0].gateway(t)
				if _, ok := opts["health"]; !ok {
					t.Errorf("k8s_gateway options %q: no health", opts)
				}
				// EndpointSlices only with health: the one rule it adds.
				cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "")
				want := chartReadOnly("/services", "networking.k8s.io/ingresses", "discovery.k8s.io/endpointslices")
				slices.Sort(want)
				if got := chartRuleSet(t, cr.Rules); !slices.Equal(got, want) {
					t.Errorf("ClusterRole rules %q, want %q", got, want)
				}
				off := chartGet[rbacv1.ClusterRole](t, chartRender(t, ns, "domain: example.com\nwatchedResources: [Service]\n"), "ClusterRole", "")
				if got := chartRuleSet(t, off.Rules); slices.ContainsFunc(got, func(r string) bool { return strings.Contains(r, "endpointslices") }) {
					t.Errorf("EndpointSlices readable without health: %q", got)
				}
			},
		},
	}
}
