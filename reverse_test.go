package gateway

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// TestReverseZonePublishing: DNSEndpoints and hostname annotations publish
// into reverse zones (PTR, RFC 2317 CNAMEs, NS delegations); synthesised PTRs
// and explicit ones merge under the conflict rules: PTRs are united, and a
// CNAME gives way to the other data at its name.
func TestReverseZonePublishing(t *testing.T) {
	zones := []string{"example.com.", "2.0.192.in-addr.arpa."}
	cfg := &source.Config{Zones: zones, TTL: 60}
	records := func(kind string, obj any) source.Result { return source.KindByName(kind).Records(obj, cfg, nil) }
	lb := func(name, ip string, annotations ...string) *source.Service {
		svc := testutil.Service(corev1.ServiceTypeLoadBalancer, ip)
		svc.Name = name
		out, _ := testutil.ViaProtobuf[source.Service](testutil.AnnotateService(svc, annotations...))
		return out
	}
	objects := map[string][]string{}
	add := func(key string, r source.Result) {
		if len(r.Warnings) > 0 {
			t.Errorf("%s: warnings %q", key, r.Warnings)
		}
		for _, rr := range source.WithPTR(r.RRs) {
			objects[key] = append(objects[key], rr.String())
		}
	}
	add("Service/apps/web", records("Service", lb("web", "192.0.2.30")))
	add("Service/apps/api", records("Service", lb("api", "192.0.2.31")))
	// A hostname annotation naming a reverse name: a CNAME there (RFC 2317).
	alias, _ := testutil.ViaProtobuf[source.Service](testutil.AnnotateService(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alias"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "40.0/25.2.0.192.in-addr.arpa"},
	}, "coredns.io/hostname", "40.2.0.192.in-addr.arpa."))
	add("Service/apps/alias", records("Service", alias))
	endpoint, err := source.KindByName("DNSEndpoint").Transform(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
		"metadata": map[string]any{"namespace": "default", "name": "rev"},
		"spec": map[string]any{"endpoints": []any{
			ep("30.2.0.192.in-addr.arpa", "PTR", "www.example.com"),                // united with the synthesised PTR
			ep("31.2.0.192.in-addr.arpa", "CNAME", "31.0/25.2.0.192.in-addr.arpa"), // gives way to the synthesised PTR
			ep("32.2.0.192.in-addr.arpa", "CNAME", "32.0/25.2.0.192.in-addr.arpa"),
			ep("0/25.2.0.192.in-addr.arpa", "NS", "ns.example.net"),
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	add("DNSEndpoint/default/rev", records("DNSEndpoint", endpoint))
	g, _ := qtGateway(t, zones, nil, objects)
	soa := "2.0.192.in-addr.arpa. 60 IN SOA dns1.kube-system.example.com. hostmaster.2.0.192.in-addr.arpa. 0 300 60 604800 60"
	for _, tc := range []test.Case{
		{Qname: "30.2.0.192.in-addr.arpa.", Qtype: dns.TypePTR, Answer: testutil.RRs(
			"30.2.0.192.in-addr.arpa. 60 IN PTR web.apps.example.com.",
			"30.2.0.192.in-addr.arpa. 60 IN PTR www.example.com.",
		)},
		{Qname: "31.2.0.192.in-addr.arpa.", Qtype: dns.TypePTR, Answer: testutil.RRs("31.2.0.192.in-addr.arpa. 60 IN PTR api.apps.example.com.")},
		{Qname: "31.2.0.192.in-addr.arpa.", Qtype: dns.TypeCNAME, Ns: testutil.RRs(soa)},
		{Qname: "32.2.0.192.in-addr.arpa.", Qtype: dns.TypePTR, Answer: testutil.RRs("32.2.0.192.in-addr.arpa. 60 IN CNAME 32.0/25.2.0.192.in-addr.arpa."),
			Ns: testutil.RRs("0/25.2.0.192.in-addr.arpa. 60 IN NS ns.example.net.")}, // the CNAME leads into the delegation
		{Qname: "40.2.0.192.in-addr.arpa.", Qtype: dns.TypePTR, Answer: testutil.RRs("40.2.0.192.in-addr.arpa. 60 IN CNAME 40.0/25.2.0.192.in-addr.arpa."),
			Ns: testutil.RRs("0/25.2.0.192.in-addr.arpa. 60 IN NS ns.example.net.")}, // the CNAME leads into the delegation
		{Qname: "web.apps.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("web.apps.example.com. 60 IN A 192.0.2.30")},
		{Qname: "alias.apps.example.com.", Qtype: dns.TypeCNAME, Answer: testutil.RRs("alias.apps.example.com. 60 IN CNAME 40.0/25.2.0.192.in-addr.arpa.")},
		{Qname: "99.2.0.192.in-addr.arpa.", Qtype: dns.TypePTR, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soa)},
	} {
		qtCheck(t, g, tc)
	}
	// The RFC 2317 delegation: a referral, without AA.
	qtCheckAA(t, g, test.Case{Qname: "33.0/25.2.0.192.in-addr.arpa.", Qtype: dns.TypePTR,
		Ns: testutil.RRs("0/25.2.0.192.in-addr.arpa. 60 IN NS ns.example.net.")}, false)
}

// ep is one endpoint of a DNSEndpoint's spec.
func ep(name, rrtype, target string) map[string]any {
	return map[string]any{"dnsName": name, "recordType": rrtype, "targets": []any{target}}
}
