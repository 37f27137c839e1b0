package source

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

func TestTargetsAdd(t *testing.T) {
	var r Result
	var tg targets
	for _, v := range []string{"192.0.2.1", " 192.0.2.1 ", "::ffff:192.0.2.1", "2001:DB8::1", "LB.example.net.", "lb.example.net", "", "  "} {
		tg.add(&r, v, "test")
	}
	if len(r.Warnings) > 0 {
		t.Errorf("unexpected warnings %q", r.Warnings)
	}
	var ips []string
	for _, ip := range tg.ips {
		ips = append(ips, ip.String())
	}
	if !slices.Equal(ips, []string{"192.0.2.1", "2001:db8::1"}) || !slices.Equal(tg.hosts, []string{"lb.example.net."}) {
		t.Errorf("targets = %q %q", ips, tg.hosts)
	}
	for _, bad := range []string{"fe80::1%eth0", "bad host", "a..b", "999.1.1.1", "10.0.0", "192.0.2.1.", "lb.example.123", "-lb.example.net"} {
		var r Result
		var tg targets
		tg.add(&r, bad, "test")
		if !tg.empty() || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], bad) {
			t.Errorf("add(%q): targets %v, warnings %q", bad, tg, r.Warnings)
		}
	}
	for _, bad := range []string{"lb.example.net", "192.0.2.256", "fe80::1%eth0", "1.2.3"} {
		var r Result
		var tg targets
		tg.addIP(&r, bad, "test")
		if !tg.empty() || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], `invalid IP "`+bad+`"`) {
			t.Errorf("addIP(%q): targets %v, warnings %q", bad, tg, r.Warnings)
		}
	}
}

// k8sCheckSlimMeta checks that slim kept the identity and read fields of orig
// and nothing else.
func k8sCheckSlimMeta(t *testing.T, orig, slim metav1.ObjectMeta) {
	t.Helper()
	if slim.Name != orig.Name || slim.Namespace != orig.Namespace || slim.UID != orig.UID || slim.ResourceVersion != orig.ResourceVersion {
		t.Errorf("identity not kept: %+v", slim)
	}
	if slim.ManagedFields != nil || slim.OwnerReferences != nil || slim.Finalizers != nil {
		t.Errorf("managed fields, owner references or finalizers kept: %+v", slim)
	}
	for k := range slim.Labels {
		if k != IgnoreLabel {
			t.Errorf("label %q kept", k)
		}
	}
	if v, ok := orig.Labels[IgnoreLabel]; ok && slim.Labels[IgnoreLabel] != v {
		t.Errorf("ignore label %q lost", v)
	}
	for k := range slim.Annotations {
		if !slices.Contains(readAnnotations, k) {
			t.Errorf("annotation %q kept", k)
		}
	}
	for _, k := range readAnnotations {
		if v, ok := orig.Annotations[k]; ok && slim.Annotations[k] != v {
			t.Errorf("annotation %q lost", k)
		}
	}
	if orig.ManagedFields == nil || orig.Annotations["kubectl.kubernetes.io/last-applied-configuration"] == "" {
		t.Errorf("the original object was changed")
	}
}

// TestSlimMeta: the metadata the kinds kept as API types keep.
func TestSlimMeta(t *testing.T) {
	orig := metav1.ObjectMeta{
		Name: "web", Namespace: "apps", Labels: map[string]string{IgnoreLabel: "true"},
		Annotations: map[string]string{"coredns.io/hostname": "www", "external-dns.kubernetes.io/ttl": "10", legacyIngressClassAnnotation: "nginx"},
	}
	testutil.NoisyMeta(&orig)
	k8sCheckSlimMeta(t, orig, slimMeta(orig))
}

// k8sCheckObjectMeta checks that m kept the identity, creation time and read
// fields of orig, and nothing else.
func k8sCheckObjectMeta(t *testing.T, orig metav1.ObjectMeta, m *objectMeta) {
	t.Helper()
	if m.GetName() != orig.Name || m.GetNamespace() != orig.Namespace || m.GetResourceVersion() != orig.ResourceVersion {
		t.Errorf("identity not kept: %+v", m)
	}
	if created := m.GetCreationTimestamp(); !created.Equal(&orig.CreationTimestamp) {
		t.Errorf("created %v, want %v", created, orig.CreationTimestamp)
	}
	if m.ignored() != (apiMeta{&orig}).ignored() {
		t.Errorf("ignored %v, want %v", m.ignored(), !m.ignored())
	}
	for i := 0; i < len(m.pairs()); i += 2 {
		if k := m.pairs()[i]; !slices.Contains(sourceAnnotations, k) {
			t.Errorf("annotation %q kept", k)
		}
	}
	for _, k := range sourceAnnotations {
		want, wantOK := orig.Annotations[k]
		if v, ok := m.annotation(k); v != want || ok != wantOK {
			t.Errorf("annotation %q: %q (%v), want %q (%v)", k, v, ok, want, wantOK)
		}
	}
}

// TestSlimIngress runs every Ingress source case on its object with fields
// added that the source does not read: the records and warnings must be
// those of the object without them, and the ingress kept must have lost them.
func TestSlimIngress(t *testing.T) {
	for _, tc := range k8sIngressCases() {
		t.Run(tc.name, func(t *testing.T) {
			ing := tc.ing.DeepCopy()
			testutil.NoisyMeta(&ing.ObjectMeta)
			pathType := networkingv1.PathTypePrefix
			backend := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}
			ing.Spec.DefaultBackend = &backend
			for i := range ing.Spec.Rules {
				ing.Spec.Rules[i].HTTP = &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pathType, Backend: backend}}}
			}
			for i := range ing.Status.LoadBalancer.Ingress {
				ing.Status.LoadBalancer.Ingress[i].Ports = []networkingv1.IngressPortStatus{{Port: 443, Protocol: corev1.ProtocolTCP}}
			}

			slim, clean := k8sSlimIngress(ing), k8sSlimIngress(tc.ing)
			want, got := ingressRecords(clean, tc.cfg, ""), ingressRecords(slim, tc.cfg, "")
			if d := testutil.Diff(testutil.Strings(got.RRs), testutil.Strings(want.RRs)); d != "" {
				t.Errorf("records differ with unread fields: %s", d)
			}
			if !slices.Equal(got.Warnings, want.Warnings) {
				t.Errorf("warnings differ with unread fields: %q, want %q", got.Warnings, want.Warnings)
			}
			// The same object with a class filter that it passes, or not.
			for _, classes := range [][]string{{"nginx"}, {"traefik", "whatever"}} {
				cfg := *tc.cfg
				cfg.IngressClasses = classes
				if a, b := testutil.Strings(ingressRecords(clean, &cfg, "").RRs), testutil.Strings(ingressRecords(slim, &cfg, "").RRs); !slices.Equal(a, b) {
					t.Errorf("records differ with unread fields and classes %q: %s", classes, testutil.Diff(b, a))
				}
			}

			k8sCheckObjectMeta(t, ing.ObjectMeta, &slim.objectMeta)
			if ing.ManagedFields == nil || ing.Spec.DefaultBackend == nil {
				t.Errorf("the original object was changed")
			}
		})
	}
}

// TestSlimService is TestSlimIngress for Services, and also checks the
// nameserver records, which are made from the same services.
func TestSlimService(t *testing.T) {
	for _, tc := range k8sServiceCases() {
		t.Run(tc.name, func(t *testing.T) {
			svc := tc.svc.DeepCopy()
			testutil.NoisyMeta(&svc.ObjectMeta)
			svc.Spec.Selector = map[string]string{"app": "web"}
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "10.96.0.10", []string{"10.96.0.10", "fd00::10"}
			svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			svc.Spec.LoadBalancerSourceRanges = []string{"0.0.0.0/0"}
			for i := range svc.Spec.Ports {
				svc.Spec.Ports[i].TargetPort = intstr.FromString("http")
				svc.Spec.Ports[i].NodePort = 30080
			}

			slim, clean := k8sSlimService(svc), k8sSlimService(tc.svc)
			want, got := serviceRecords(clean, tc.cfg), serviceRecords(slim, tc.cfg)
			if d := testutil.Diff(testutil.Strings(got.RRs), testutil.Strings(want.RRs)); d != "" {
				t.Errorf("records differ with unread fields: %s", d)
			}
			if !slices.Equal(got.Warnings, want.Warnings) {
				t.Errorf("warnings differ with unread fields: %q, want %q", got.Warnings, want.Warnings)
			}
			if a, b := testutil.Strings(NameserverRecords(clean, tc.cfg).RRs), testutil.Strings(NameserverRecords(slim, tc.cfg).RRs); !slices.Equal(a, b) {
				t.Errorf("nameserver records differ with unread fields: %s", testutil.Diff(b, a))
			}

			k8sCheckObjectMeta(t, svc.ObjectMeta, &slim.objectMeta)
			if svc.ManagedFields == nil || svc.Spec.Selector == nil {
				t.Errorf("the original object was changed")
			}
		})
	}
}

// TestAnnotationPrecedence: for each key the GA prefix wins over the alpha
// one; an invalid value under one prefix is logged and does not hide a valid
// one under the other; coredns.io/hostname always adds its names.
func TestAnnotationPrecedence(t *testing.T) {
	const (
		gaHost, alphaHost, coreHost = "external-dns.kubernetes.io/hostname", "external-dns.alpha.kubernetes.io/hostname", "coredns.io/hostname"
		gaTarget, alphaTarget       = "external-dns.kubernetes.io/target", "external-dns.alpha.kubernetes.io/target"
		gaTTL, alphaTTL             = "external-dns.kubernetes.io/ttl", "external-dns.alpha.kubernetes.io/ttl"
	)
	zones := []string{"example.com."}
	tests := []struct {
		name        string
		annotations map[string]string
		hosts       []string
		target      string // the first target, "" when the annotations give none
		ttl         uint32
		warn        []string
	}{
		{name: "none", ttl: 60},
		{
			name:        "GA wins for every key",
			annotations: map[string]string{gaHost: "ga", alphaHost: "alpha", gaTarget: "192.0.2.1", alphaTarget: "192.0.2.2", gaTTL: "10", alphaTTL: "20"},
			hosts:       []string{"ga.example.com."}, target: "192.0.2.1", ttl: 10,
		},
		{
			name:        "alpha alone",
			annotations: map[string]string{alphaHost: "alpha", alphaTarget: "lb.example.net", alphaTTL: "20"},
			hosts:       []string{"alpha.example.com."}, target: "lb.example.net.", ttl: 20,
		},
		{
			name:        "invalid GA values do not hide valid alpha ones",
			annotations: map[string]string{gaHost: "bad name!", alphaHost: "alpha", gaTarget: "bad target!", alphaTarget: "192.0.2.2", gaTTL: "soon", alphaTTL: "20"},
			hosts:       []string{"alpha.example.com."}, target: "192.0.2.2", ttl: 20,
			warn: []string{`"bad name!"`, `"bad target!"`, gaTarget + " has no valid target", `invalid TTL "soon" in annotation ` + gaTTL},
		},
		{
			name:        "invalid alpha values do not hide valid GA ones",
			annotations: map[string]string{gaHost: "ga", alphaHost: "bad name!", gaTarget: "192.0.2.1", alphaTarget: "bad!", gaTTL: "10", alphaTTL: "soon"},
			hosts:       []string{"ga.example.com."}, target: "192.0.2.1", ttl: 10,
		},
		{
			name:        "a GA hostname outside the zones falls back to the alpha one",
			annotations: map[string]string{gaHost: "www.example.net.", alphaHost: "alpha"},
			hosts:       []string{"alpha.example.com."}, ttl: 60,
			warn: []string{"outside the zones"},
		},
		{
			name:        "both TTLs invalid: the default",
			annotations: map[string]string{gaTTL: "-1", alphaTTL: "x"},
			ttl:         60,
			warn:        []string{`"-1" in annotation ` + gaTTL, `"x" in annotation ` + alphaTTL},
		},
		{
			name:        "coredns.io/hostname adds to the external-dns names",
			annotations: map[string]string{coreHost: "own", gaHost: "ga", alphaHost: "alpha"},
			hosts:       []string{"own.example.com.", "ga.example.com."}, ttl: 60,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := &metav1.ObjectMeta{Annotations: tc.annotations}
			kept := newObjectMeta(api)
			// Read from an API object, and from what the ingress and service informers keep.
			for what, meta := range map[string]sourceMeta{"API object": apiMeta{api}, "objectMeta": &kept} {
				var r Result
				hosts := annotationHostnames(&r, meta, zones)
				tg, ok := annotationTargets(&r, meta)
				ttl := objectTTL(&r, meta, 60)
				if !slices.Equal(hosts, tc.hosts) {
					t.Errorf("%s: hostnames %q, want %q", what, hosts, tc.hosts)
				}
				var target string
				switch {
				case len(tg.ips) > 0:
					target = tg.ips[0].String()
				case len(tg.hosts) > 0:
					target = tg.hosts[0]
				}
				if target != tc.target || ok != (tc.target != "") {
					t.Errorf("%s: target %q (%v), want %q", what, target, ok, tc.target)
				}
				if ttl != tc.ttl {
					t.Errorf("%s: ttl %d, want %d", what, ttl, tc.ttl)
				}
				testutil.CheckWarnings(t, r.Warnings, tc.warn)
			}
		})
	}
}

// TestHostileObjectWarningsBounded: an object with thousands of bad names,
// and one with a name of 100 KB, make a bounded warning (one log line):
// maxWarnings quoting at most maxWarningValue octets of a value, and a count
// of the others;
// its good names are all published.
func TestHostileObjectWarningsBounded(t *testing.T) {
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "hostile", Namespace: "default", Annotations: map[string]string{
			"external-dns.kubernetes.io/hostname": strings.Repeat("x", 100_000) + ".example.com",
		}},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
			Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}},
		}},
	}
	const bad, good = 3000, 2000
	for i := range bad {
		host := []string{"ünï.example.com", "\xff\xfe.example.com", strings.Repeat("l", 64) + ".example.com"}[i%3]
		ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{Host: fmt.Sprintf("%d%s", i, host)})
	}
	for i := range good {
		ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{Host: fmt.Sprintf("h%d.example.com", i)})
	}
	r := ingressRecords(k8sSlimIngress(ing), &Config{Zones: []string{"example.com."}, TTL: 60}, "")
	if len(r.RRs) != good {
		t.Errorf("%d records, want %d", len(r.RRs), good)
	}
	if len(r.Warnings) != maxWarnings+1 {
		t.Fatalf("%d warnings, want %d: %q", len(r.Warnings), maxWarnings+1, r.Warnings)
	}
	if want := fmt.Sprintf("and %d more", bad+1-maxWarnings); r.Warnings[maxWarnings] != want {
		t.Errorf("last warning %q, want %q", r.Warnings[maxWarnings], want)
	}
	for _, w := range r.Warnings {
		if len(w) > 4*maxWarningValue+200 || !utf8.ValidString(w) {
			t.Errorf("warning of %d octets (valid UTF-8: %v): %.80q", len(w), utf8.ValidString(w), w)
		}
	}
}
