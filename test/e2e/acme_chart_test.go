//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// acmeRules are the rules the chart grants with acme.enabled and secretKeys.
var acmeRules = []string{
	"/secrets:list,watch",
	"externaldns.k8s.io/dnsendpoints:create,delete,get,list,update,watch",
}

// TestChartACME renders the chart with acme.enabled: cluster-wide, then per
// tenant namespace with a Corefile key; the RBAC is applied and checked with
// kubectl auth can-i, and bad acme values are refused.
func TestChartACME(t *testing.T) {
	chartHelm(t)
	ns, nsA, nsB, other := namespace(t), namespace(t), namespace(t), namespace(t)

	// Cluster-wide: a ClusterRole of its own, the updates block.
	m := chartRender(t, ns, "domain: example.com\nacme: {enabled: true}\n")
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
	sa := "system:serviceaccount:" + ns + ":k8s-gateway"
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
			t.Errorf("can-i %s %s -n %s: %q, want %s", c.verb, c.resource, c.ns, got, c.want)
		}
	}

	for _, c := range []struct{ values, want string }{
		{"domain: example.com\nwatchedResources: [Service]\nacme: {enabled: true}\n", "acme.enabled needs DNSEndpoint in watchedResources"},
		{"domain: example.com\nacme: {enabled: true, secretKeys: false}\n", "acme.enabled needs keys"},
		{"domain: example.com\nacme: {enabled: true, namespaces: [a], keys: [{name: k., namespace: b, secretName: s}]}\n", "its namespace b is not in acme.namespaces"},
		{"domain: example.com\nacme: {enabled: true, keys: [{name: k., namespace: b, secretName: s, algorithm: hmac-md5}]}\n", "/acme/keys/0/algorithm"},
	} {
		if out, errOut, err := chartHelmRun(t, "template", "k8s-gateway", chartDir, "-f", chartValuesFile(t, c.values)); err == nil || !strings.Contains(errOut, c.want) {
			t.Errorf("helm template with %q: err %v, want %q:\n%s%s", c.values, err, c.want, out, errOut)
		}
	}
}
