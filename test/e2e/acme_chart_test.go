//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// acmeRules are the rules the chart grants where the challenges are
// written, with the keys' Secrets read there too.
var acmeRules = []string{
	"/secrets:list,watch",
	"externaldns.k8s.io/dnsendpoints:create,delete,get,list,update,watch",
}

// acmeWrites are the rules of the challenges alone.
var acmeWrites = acmeRules[1:]

// chartNoSecretsClusterWide fails when a ClusterRole of m grants anything
// on Secrets.
func chartNoSecretsClusterWide(t *testing.T, m chartManifest, what string) {
	t.Helper()
	for _, o := range m.objs {
		if o.Kind != "ClusterRole" {
			continue
		}
		cr := chartGet[rbacv1.ClusterRole](t, chartManifest{objs: []chartObject{o}}, "ClusterRole", "")
		for _, r := range chartRuleSet(t, cr.Rules) {
			if strings.HasPrefix(r, "/secrets:") {
				t.Errorf("%s: ClusterRole %s grants %s", what, cr.Name, r)
			}
		}
	}
}

// chartUpdatesServices checks that the DNS Service publishes no updates port
// and that the updates Service is of type want, with the UPDATE port over
// UDP and TCP.
func chartUpdatesServices(t *testing.T, m chartManifest, what string, want corev1.ServiceType) corev1.Service {
	t.Helper()
	dns := chartGet[corev1.Service](t, m, "Service", "k8s-gateway")
	for _, p := range dns.Spec.Ports {
		if strings.HasPrefix(p.Name, "updates") || p.Port == 5353 {
			t.Errorf("%s: the DNS Service (%s) publishes the updates port: %+v", what, dns.Spec.Type, p)
		}
	}
	upd := chartGet[corev1.Service](t, m, "Service", "k8s-gateway-updates")
	if upd.Spec.Type != want {
		t.Errorf("%s: updates Service of type %s, want %s", what, upd.Spec.Type, want)
	}
	var ports []string
	for _, p := range upd.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%s/%d", p.Protocol, p.Port))
	}
	if !slices.Equal(ports, []string{"UDP/5353", "TCP/5353"}) {
		t.Errorf("%s: updates Service ports %q", what, ports)
	}
	return upd
}

// TestChartACME renders the chart with acme.enabled: with nothing else it
// fails, saying what to set; the keys' Secrets are read per tenant namespace,
// in one namespace of the platform team's, or cluster-wide only when asked
// for by name; the RBAC is applied and checked with kubectl auth can-i. The
// updates port is on a Service of its own, ClusterIP unless a LoadBalancer
// is asked for with source ranges. Bad acme values are refused.
func TestChartACME(t *testing.T) {
	chartHelm(t)
	ns, nsA, nsB, other, platform := namespace(t), namespace(t), namespace(t), namespace(t), namespace(t)
	sa := "system:serviceaccount:" + ns + ":k8s-gateway"

	// acme.enabled and nothing else: no ClusterRole on Secrets by default;
	// the install fails and names the three ways.
	out, errOut, err := chartHelmRun(t, "template", "k8s-gateway", chartDir, "-f", chartValuesFile(t, "domain: example.com\nacme: {enabled: true}\n"))
	if err == nil {
		chartNoSecretsClusterWide(t, parseChartManifest(t, out), "acme.enabled alone")
		t.Error("acme.enabled alone renders; want it to fail naming acme.namespaces, acme.keyNamespace and acme.secrets.clusterWide")
	}
	for _, want := range []string{"acme.namespaces", "acme.keyNamespace", "acme.secrets.clusterWide: true"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("acme.enabled alone: the error does not say %q:\n%s", want, errOut)
		}
	}

	// Cluster-wide, asked for: a ClusterRole of its own, the updates block.
	m := chartRender(t, ns, "domain: example.com\nacme: {enabled: true, secrets: {clusterWide: true}}\n")
	cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "k8s-gateway."+ns+"-acme")
	if got := chartRuleSet(t, cr.Rules); !slices.Equal(got, acmeRules) {
		t.Errorf("acme ClusterRole rules:\n got %q\nwant %q", got, acmeRules)
	}
	cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "")
	for _, want := range []string{"updates {", "listen :5353\n", "secrets\n", "expire 1h", "maxttl 300", "rate 30"} {
		if !strings.Contains(cm.Data["Corefile"], want) {
			t.Errorf("Corefile without %q:\n%s", want, cm.Data["Corefile"])
		}
	}
	chartUpdatesServices(t, m, "clusterWide", corev1.ServiceTypeClusterIP)
	chartApplyDryRun(t, m.text)

	// Per tenant: Roles in the tenants' namespaces only, the key's Secret mounted.
	values := fmt.Sprintf(`domain: example.com
acme:
  enabled: true
  namespaces: [%s, %s]
  keys: [{name: core-a., namespace: %s, secretName: tsig-a, algorithm: hmac-sha512}]
`, nsA, nsB, nsA)
	if out := chartHelmOut(t, "lint", "--strict", chartDir, "--namespace", ns, "-f", chartValuesFile(t, values)); !strings.Contains(out, "0 chart(s) failed") {
		t.Errorf("helm lint --strict:\n%s", out)
	}
	m = chartRender(t, ns, values)
	if slices.Contains(m.kinds(), "ClusterRole//k8s-gateway."+ns+"-acme") {
		t.Error("a ClusterRole for acme with acme.namespaces")
	}
	chartNoSecretsClusterWide(t, m, "acme.namespaces")
	chartUpdatesServices(t, m, "acme.namespaces", corev1.ServiceTypeClusterIP)
	var roles []string
	for _, k := range m.kinds() {
		if strings.HasPrefix(k, "Role/") && strings.HasSuffix(k, "-acme") {
			roles = append(roles, k)
		}
	}
	if want := []string{"Role/" + nsA + "/k8s-gateway-acme", "Role/" + nsB + "/k8s-gateway-acme"}; !slices.Equal(roles, slices.Sorted(slices.Values(want))) {
		t.Errorf("acme Roles %q, want %q", roles, want)
	}
	cm = chartGet[corev1.ConfigMap](t, m, "ConfigMap", "")
	for _, want := range []string{"key core-a. hmac-sha512 /etc/k8s-gateway/tsig/tsig-a/secret " + nsA, "secrets " + nsA + " " + nsB} {
		if !strings.Contains(cm.Data["Corefile"], want) {
			t.Errorf("Corefile without %q:\n%s", want, cm.Data["Corefile"])
		}
	}
	d := chartGet[appsv1.Deployment](t, m, "Deployment", "")
	if !slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == "tsig-a" }) {
		t.Errorf("the key's Secret is not mounted: %+v", d.Spec.Template.Spec.Volumes)
	}
	kubectl(t, m.only("ServiceAccount", "Role", "RoleBinding"), "apply", "-f", "-")
	for _, c := range []struct{ verb, resource, ns, want string }{
		{"create", "dnsendpoints.externaldns.k8s.io", nsA, "yes"},
		{"delete", "dnsendpoints.externaldns.k8s.io", nsB, "yes"},
		{"update", "dnsendpoints.externaldns.k8s.io", nsA, "yes"},
		{"list", "secrets", nsA, "yes"},
		{"get", "secrets", nsA, "no"},
		{"create", "secrets", nsA, "no"},
		{"create", "dnsendpoints.externaldns.k8s.io", other, "no"},
		{"list", "secrets", other, "no"},
		{"list", "secrets", ns, "no"},
	} {
		if got := chartCanI(t, sa, c.verb, c.resource, "-n", c.ns); got != c.want {
			t.Errorf("acme.namespaces: can-i %s %s -n %s: %q, want %s", c.verb, c.resource, c.ns, got, c.want)
		}
	}
	kubectl(t, m.only("Role", "RoleBinding"), "delete", "-f", "-")

	// One namespace of the platform team's: a Role on its Secrets alone, the
	// challenges written in the tenants' namespaces (cluster-wide here).
	m = chartRender(t, ns, fmt.Sprintf("domain: example.com\nacme: {enabled: true, keyNamespace: %s}\n", platform))
	chartNoSecretsClusterWide(t, m, "acme.keyNamespace")
	chartUpdatesServices(t, m, "acme.keyNamespace", corev1.ServiceTypeClusterIP)
	cr = chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "k8s-gateway."+ns+"-acme")
	if got := chartRuleSet(t, cr.Rules); !slices.Equal(got, acmeWrites) {
		t.Errorf("acme.keyNamespace: ClusterRole rules %q, want %q", got, acmeWrites)
	}
	chartCheckRoles(t, m, ns, map[string][]string{platform: {"/secrets:list,watch"}})
	cm = chartGet[corev1.ConfigMap](t, m, "ConfigMap", "")
	if want := "tenant_secrets " + platform + "\n"; !strings.Contains(cm.Data["Corefile"], want) {
		t.Errorf("Corefile without %q:\n%s", want, cm.Data["Corefile"])
	}
	kubectl(t, m.only("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"), "apply", "-f", "-")
	t.Cleanup(func() {
		kubectlErr(m.only("ClusterRole", "ClusterRoleBinding"), "delete", "--ignore-not-found", "-f", "-")
	})
	for _, c := range []struct{ verb, resource, ns, want string }{
		{"list", "secrets", platform, "yes"},
		{"watch", "secrets", platform, "yes"},
		{"get", "secrets", platform, "no"},
		{"list", "secrets", nsA, "no"},
		{"list", "secrets", ns, "no"},
		{"create", "dnsendpoints.externaldns.k8s.io", nsA, "yes"},
	} {
		if got := chartCanI(t, sa, c.verb, c.resource, "-n", c.ns); got != c.want {
			t.Errorf("acme.keyNamespace: can-i %s %s -n %s: %q, want %s", c.verb, c.resource, c.ns, got, c.want)
		}
	}
	if got := chartCanI(t, sa, "list", "secrets", "--all-namespaces"); got != "no" {
		t.Errorf("acme.keyNamespace: can-i list secrets --all-namespaces: %q", got)
	}

	// The updates Service as a LoadBalancer: asked for, with source ranges;
	// the clients' addresses kept.
	m = chartRender(t, ns, fmt.Sprintf("domain: example.com\nacme: {enabled: true, keyNamespace: %s, service: {type: LoadBalancer, loadBalancerSourceRanges: [10.0.0.0/8]}}\n", platform))
	upd := chartUpdatesServices(t, m, "LoadBalancer", corev1.ServiceTypeLoadBalancer)
	if !slices.Equal(upd.Spec.LoadBalancerSourceRanges, []string{"10.0.0.0/8"}) || upd.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
		t.Errorf("updates LoadBalancer: ranges %q, policy %q", upd.Spec.LoadBalancerSourceRanges, upd.Spec.ExternalTrafficPolicy)
	}
	chartApplyDryRun(t, m.only("Service"))

	// The NetworkPolicy example is one the API server takes.
	np, err := os.ReadFile(filepath.Join(repoRoot, "examples/networkpolicy-acme.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	chartApplyDryRun(t, strings.Replace(string(np), "namespace: dns\n", "namespace: "+ns+"\n", 1))

	for _, c := range []struct{ values, want string }{
		{"domain: example.com\nwatchedResources: [Service]\nacme: {enabled: true, namespaces: [a]}\n", "acme.enabled needs DNSEndpoint in watchedResources"},
		{"domain: example.com\nacme: {enabled: true, secretKeys: false}\n", "acme.enabled needs keys"},
		{"domain: example.com\nacme: {enabled: true, namespaces: [a], keys: [{name: k., namespace: b, secretName: s}]}\n", "its namespace b is not in acme.namespaces"},
		{"domain: example.com\nacme: {enabled: true, keys: [{name: k., namespace: b, secretName: s, algorithm: hmac-md5}]}\n", "/acme/keys/0/algorithm"},
		{"domain: example.com\nacme: {enabled: true, namespaces: [a], secrets: {clusterWide: true}}\n", "leave acme.namespaces and acme.keyNamespace empty"},
		{"domain: example.com\nacme: {enabled: true, secretKeys: false, keyNamespace: p, keys: [{name: k., namespace: b, secretName: s}]}\n", "acme.keyNamespace needs acme.secretKeys"},
		{"domain: example.com\nacme: {enabled: true, namespaces: [a], service: {type: LoadBalancer}}\n", "give acme.service.loadBalancerSourceRanges"},
		{"domain: example.com\nacme: {enabled: true, namespaces: [a], service: {type: NodePort}}\n", "/acme/service/type"},
	} {
		if out, errOut, err := chartHelmRun(t, "template", "k8s-gateway", chartDir, "-f", chartValuesFile(t, c.values)); err == nil || !strings.Contains(errOut, c.want) {
			t.Errorf("helm template with %q: err %v, want %q:\n%s%s", c.values, err, c.want, out, errOut)
		}
	}
}
