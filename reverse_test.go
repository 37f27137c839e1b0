package gateway

import (
	"slices"
	"testing"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var rtZones = []string{"example.com.", "2.0.192.in-addr.arpa."}

// rtEndpoint returns a DNSEndpoint default/name with one endpoint per triple
// dnsName, recordType, target.
func rtEndpoint(name string, eps ...string) *dnsEndpoint {
	e := &dnsEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	for i := 0; i+2 < len(eps); i += 3 {
		e.Spec.Endpoints = append(e.Spec.Endpoints, endpoint{DNSName: eps[i], RecordType: eps[i+1], Targets: []string{eps[i+2]}})
	}
	return e
}

// TestReverseZoneNames: absolute names in a reverse zone are inside the
// zones; relative names mean forward names only, and a Service's own name is
// published in the forward zones only.
func TestReverseZoneNames(t *testing.T) {
	for _, tc := range []struct {
		host     string
		relative bool
		want     []string
		warn     bool
	}{
		{host: "30.2.0.192.in-addr.arpa", want: []string{"30.2.0.192.in-addr.arpa."}},
		{host: "30.0/25.2.0.192.IN-ADDR.ARPA.", want: []string{"30.0/25.2.0.192.in-addr.arpa."}},
		{host: "www", relative: true, want: []string{"www.example.com."}},
		{host: "30.3.0.192.in-addr.arpa.", warn: true},
		{host: "0/25.example.com", warn: true}, // a slash only in reverse names
	} {
		var r result
		got := zoneNames(&r, tc.host, rtZones, tc.relative, "test")
		if !slices.Equal(got, tc.want) || tc.warn != (len(r.warnings) > 0) {
			t.Errorf("zoneNames(%q, %v) = %q, warnings %q; want %q", tc.host, tc.relative, got, r.warnings, tc.want)
		}
	}
	var r result
	svc := k8sSlimService(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"}})
	if got := serviceNames(&r, svc, rtZones); !slices.Equal(got, []string{"web.apps.example.com."}) {
		t.Errorf("serviceNames = %q, want the forward zone only", got)
	}
}

// TestReverseZonePublishing: DNSEndpoints and hostname annotations publish
// into reverse zones (PTR, RFC 2317 CNAMEs, NS delegations); synthesised PTRs
// and explicit ones merge under the conflict rules: PTRs are united, and a
// CNAME gives way to the other data at its name.
func TestReverseZonePublishing(t *testing.T) {
	cfg := &sourceConfig{zones: rtZones, ttl: 60}
	lb := func(name, ip string, annotations ...string) *service {
		svc := testutil.Service(corev1.ServiceTypeLoadBalancer, ip)
		svc.Name = name
		return k8sSlimService(testutil.AnnotateService(svc, annotations...))
	}
	objects := map[string][]string{}
	add := func(key string, r result) {
		if len(r.warnings) > 0 {
			t.Errorf("%s: warnings %q", key, r.warnings)
		}
		for _, rr := range withPTR(r.rrs) {
			objects[key] = append(objects[key], rr.String())
		}
	}
	add("Service/apps/web", serviceRecords(lb("web", "192.0.2.30"), cfg))
	add("Service/apps/api", serviceRecords(lb("api", "192.0.2.31"), cfg))
	// A hostname annotation naming a reverse name: a CNAME there (RFC 2317).
	add("Service/apps/alias", serviceRecords(k8sSlimService(testutil.AnnotateService(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alias"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "40.0/25.2.0.192.in-addr.arpa"},
	}, "coredns.io/hostname", "40.2.0.192.in-addr.arpa.")), cfg))
	add("DNSEndpoint/default/rev", dnsEndpointRecords(rtEndpoint("rev",
		"30.2.0.192.in-addr.arpa", "PTR", "www.example.com", // united with the synthesised PTR
		"31.2.0.192.in-addr.arpa", "CNAME", "31.0/25.2.0.192.in-addr.arpa", // gives way to the synthesised PTR
		"32.2.0.192.in-addr.arpa", "CNAME", "32.0/25.2.0.192.in-addr.arpa",
		"0/25.2.0.192.in-addr.arpa", "NS", "ns.example.net",
	), cfg))
	g, _ := qtGateway(t, rtZones, nil, objects)
	soa := "2.0.192.in-addr.arpa. 60 IN SOA dns1.kube-system.example.com. hostmaster.2.0.192.in-addr.arpa. 0 300 60 604800 60"
	for _, tc := range []test.Case{
		{Qname: "30.2.0.192.in-addr.arpa.", Qtype: dns.TypePTR, Answer: qtRRs(
			"30.2.0.192.in-addr.arpa. 60 IN PTR web.apps.example.com.",
			"30.2.0.192.in-addr.arpa. 60 IN PTR www.example.com.",
		)},
		{Qname: "31.2.0.192.in-addr.arpa.", Qtype: dns.TypePTR, Answer: qtRRs("31.2.0.192.in-addr.arpa. 60 IN PTR api.apps.example.com.")},
		{Qname: "31.2.0.192.in-addr.arpa.", Qtype: dns.TypeCNAME, Ns: qtRRs(soa)},
		{Qname: "32.2.0.192.in-addr.arpa.", Qtype: dns.TypePTR, Answer: qtRRs("32.2.0.192.in-addr.arpa. 60 IN CNAME 32.0/25.2.0.192.in-addr.arpa."),
			Ns: qtRRs("0/25.2.0.192.in-addr.arpa. 60 IN NS ns.example.net.")}, // the CNAME leads into the delegation
		{Qname: "40.2.0.192.in-addr.arpa.", Qtype: dns.TypePTR, Answer: qtRRs("40.2.0.192.in-addr.arpa. 60 IN CNAME 40.0/25.2.0.192.in-addr.arpa."),
			Ns: qtRRs("0/25.2.0.192.in-addr.arpa. 60 IN NS ns.example.net.")}, // the CNAME leads into the delegation
		{Qname: "web.apps.example.com.", Qtype: dns.TypeA, Answer: qtRRs("web.apps.example.com. 60 IN A 192.0.2.30")},
		{Qname: "alias.apps.example.com.", Qtype: dns.TypeCNAME, Answer: qtRRs("alias.apps.example.com. 60 IN CNAME 40.0/25.2.0.192.in-addr.arpa.")},
		{Qname: "99.2.0.192.in-addr.arpa.", Qtype: dns.TypePTR, Rcode: dns.RcodeNameError, Ns: qtRRs(soa)},
	} {
		qtCheck(t, g, tc)
	}
	// The RFC 2317 delegation: a referral, without AA.
	qtCheckAA(t, g, test.Case{Qname: "33.0/25.2.0.192.in-addr.arpa.", Qtype: dns.TypePTR,
		Ns: qtRRs("0/25.2.0.192.in-addr.arpa. 60 IN NS ns.example.net.")}, false)
}
