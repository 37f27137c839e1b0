package gateway

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed-e581d630/k8s_gateway/source"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// lookupObjects is the example.com. zone of the lookup tests, as Kubernetes
// objects would publish it.
var lookupObjects = map[string][]string{
	"Ingress/default/web": {
		"www.example.com. 60 IN A 192.0.2.1",
		"www.example.com. 60 IN A 192.0.2.2",
		"www.example.com. 60 IN AAAA 2001:db8::1",
	},
	"Service/default/v4":   {"v4.example.com. 60 IN A 192.0.2.10"},
	"Service/default/v6":   {"v6.example.com. 60 IN AAAA 2001:db8::10"},
	"Service/default/apex": {"example.com. 60 IN A 192.0.2.100"},
	// The nameservers: the apex (both families) and the secondary.
	"Service/kube-system/dns1": {
		"dns1.kube-system.example.com. 60 IN A 192.0.2.53",
		"dns1.kube-system.example.com. 60 IN AAAA 2001:db8::53",
	},
	"Service/kube-system/dns2": {"dns2.kube-system.example.com. 60 IN A 192.0.2.54"},
	// CNAMEs.
	"Ingress/default/alias": {"alias.example.com. 300 IN CNAME www.example.com."},
	"Ingress/default/chain": {
		"c1.example.com. 300 IN CNAME c2.example.com.",
		"c2.example.com. 300 IN CNAME v4.example.com.",
	},
	"Ingress/default/ext":      {"ext.example.com. 300 IN CNAME www.example.net."},
	"Ingress/default/dangling": {"dangling.example.com. 300 IN CNAME missing.example.com."},
	"Ingress/default/loop": {
		"loop1.example.com. 300 IN CNAME loop2.example.com.",
		"loop2.example.com. 300 IN CNAME loop1.example.com.",
	},
	"Ingress/default/self":   {"self.example.com. 300 IN CNAME self.example.com."},
	"Ingress/default/toent":  {"toent.example.com. 300 IN CNAME b.c.example.com."},
	"Ingress/default/towild": {"towild.example.com. 300 IN CNAME x.w.example.com."},
	"Ingress/default/upper":  {"upper.example.com. 300 IN CNAME WWW.Example.COM."},
	// An empty non-terminal chain: c.example.com. and b.c.example.com.
	"Ingress/default/deep": {"a.b.c.example.com. 60 IN A 192.0.2.20"},
	// Wildcards: *.w with an existing name a.b.w below it (so b.w is an ENT).
	"Ingress/default/wild": {
		"*.w.example.com. 60 IN A 192.0.2.50",
		"a.b.w.example.com. 60 IN A 192.0.2.51",
	},
	"Ingress/default/wildcname":     {"*.wc.example.com. 300 IN CNAME www.example.com."},
	"Ingress/default/wildext":       {"*.we.example.com. 300 IN CNAME www.example.net."},
	"Ingress/default/wilddangling":  {"*.wd.example.com. 300 IN CNAME missing.example.com."},
	"Ingress/default/wildunderapex": {"host.wa.example.com. 60 IN A 192.0.2.60"},
	// An empty non-terminal wildcard: "*.e" exists only because of "a.*.e".
	"Ingress/default/entwild": {"a.*.e.example.com. 60 IN A 192.0.2.70"},
	// Other types.
	"Ingress/default/txt":  {`txt.example.com. 60 IN TXT "hello"`},
	"Service/default/mail": {"mail.example.com. 60 IN MX 10 v4.example.com.", "mail.example.com. 60 IN MX 20 mx.example.net."},
	"Service/default/srv":  {"_http._tcp.svc.example.com. 60 IN SRV 0 100 80 www.example.com."},
}

func init() {
	// chain8: eight CNAMEs in a row, then an address: answered.
	// chain9: nine CNAMEs in a row: longer than maxChain, answered as far
	// as maxChain goes.
	for _, n := range []int{8, 9} {
		var rrs []string
		for i := 1; i <= n; i++ {
			rrs = append(rrs, fmt.Sprintf("l%d.chain%d.example.com. 300 IN CNAME l%d.chain%d.example.com.", i, n, i+1, n))
		}
		rrs = append(rrs, fmt.Sprintf("l%d.chain%d.example.com. 60 IN A 192.0.2.%d", n+1, n, n))
		lookupObjects[fmt.Sprintf("Ingress/default/chain%d", n)] = rrs
	}
}

func lookupGateway(t testing.TB) *Gateway {
	g, _ := qtGateway(t, []string{"example.com."}, func(g *Gateway) { g.secondary = "dns2.kube-system" }, lookupObjects)
	return g
}

var (
	soaCom = qtSOA("example.com.")

	wwwA1   = "www.example.com. 60 IN A 192.0.2.1"
	wwwA2   = "www.example.com. 60 IN A 192.0.2.2"
	wwwAAAA = "www.example.com. 60 IN AAAA 2001:db8::1"
)

// lookupCases cover RFC 1034 §4.3.2, RFC 2308, RFC 4592 and RFC 8482 on the
// zone above. Every case names its rcode and all three sections in full.
var lookupCases = []test.Case{
	// Positive answers: AA, minimal responses (no NS in authority).
	{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs(wwwA1, wwwA2)},
	{Qname: "www.example.com.", Qtype: dns.TypeAAAA, Answer: testutil.RRs(wwwAAAA)},
	{Qname: "v6.example.com.", Qtype: dns.TypeAAAA, Answer: testutil.RRs("v6.example.com. 60 IN AAAA 2001:db8::10")},
	{Qname: "a.b.c.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("a.b.c.example.com. 60 IN A 192.0.2.20")},
	{Qname: "txt.example.com.", Qtype: dns.TypeTXT, Answer: testutil.RRs(`txt.example.com. 60 IN TXT "hello"`)},
	// MX and SRV: in-zone targets' addresses in additional, out-of-zone none.
	{
		Qname: "mail.example.com.", Qtype: dns.TypeMX,
		Answer: testutil.RRs("mail.example.com. 60 IN MX 10 v4.example.com.", "mail.example.com. 60 IN MX 20 mx.example.net."),
		Extra:  testutil.RRs("v4.example.com. 60 IN A 192.0.2.10"),
	},
	{
		Qname: "_http._tcp.svc.example.com.", Qtype: dns.TypeSRV,
		Answer: testutil.RRs("_http._tcp.svc.example.com. 60 IN SRV 0 100 80 www.example.com."),
		Extra:  testutil.RRs(wwwA1, wwwA2, wwwAAAA),
	},

	// NODATA: the name exists, not with this type. SOA in authority.
	{Qname: "v6.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "v4.example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeMX, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeTXT, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeSRV, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeCAA, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeCNAME, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeHTTPS, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypePTR, Ns: testutil.RRs(soaCom)},
	{Qname: "txt.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	// SOA and NS below the apex.
	{Qname: "www.example.com.", Qtype: dns.TypeSOA, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeNS, Ns: testutil.RRs(soaCom)},
	{Qname: "c.example.com.", Qtype: dns.TypeNS, Ns: testutil.RRs(soaCom)},
	// Empty non-terminals, every type.
	{Qname: "c.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "b.c.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "b.c.example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaCom)},
	{Qname: "b.c.example.com.", Qtype: dns.TypeCNAME, Ns: testutil.RRs(soaCom)},
	{Qname: "b.c.example.com.", Qtype: dns.TypeTXT, Ns: testutil.RRs(soaCom)},
	{Qname: "b.c.example.com.", Qtype: dns.TypeANY, Ns: testutil.RRs(soaCom)},
	{Qname: "kube-system.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "_tcp.svc.example.com.", Qtype: dns.TypeSRV, Ns: testutil.RRs(soaCom)},

	// NXDOMAIN, every type; and below existing names (no wildcard there).
	{Qname: "missing.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeAAAA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeCNAME, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeMX, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeSRV, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeTXT, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeSOA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeNS, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeANY, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "x.www.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "x.a.b.c.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "x.c.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	// Below a CNAME owner: no DNAME semantics, the name does not exist.
	{Qname: "x.alias.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},

	// CNAME: every qtype but CNAME and ANY follows it inside the zone.
	{
		Qname: "alias.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs("alias.example.com. 300 IN CNAME www.example.com.", wwwA1, wwwA2),
	},
	{
		Qname: "alias.example.com.", Qtype: dns.TypeAAAA,
		Answer: testutil.RRs("alias.example.com. 300 IN CNAME www.example.com.", wwwAAAA),
	},
	{
		// The target exists without the type: NODATA after the CNAME.
		Qname: "alias.example.com.", Qtype: dns.TypeMX,
		Answer: testutil.RRs("alias.example.com. 300 IN CNAME www.example.com."),
		Ns:     testutil.RRs(soaCom),
	},
	{
		Qname: "alias.example.com.", Qtype: dns.TypeTXT,
		Answer: testutil.RRs("alias.example.com. 300 IN CNAME www.example.com."),
		Ns:     testutil.RRs(soaCom),
	},
	{Qname: "alias.example.com.", Qtype: dns.TypeCNAME, Answer: testutil.RRs("alias.example.com. 300 IN CNAME www.example.com.")},
	{Qname: "alias.example.com.", Qtype: dns.TypeANY, Answer: testutil.RRs("alias.example.com. 300 IN CNAME www.example.com.")},
	{
		Qname: "c1.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs(
			"c1.example.com. 300 IN CNAME c2.example.com.",
			"c2.example.com. 300 IN CNAME v4.example.com.",
			"v4.example.com. 60 IN A 192.0.2.10",
		),
	},
	{
		Qname: "c1.example.com.", Qtype: dns.TypeAAAA,
		Answer: testutil.RRs(
			"c1.example.com. 300 IN CNAME c2.example.com.",
			"c2.example.com. 300 IN CNAME v4.example.com.",
		),
		Ns: testutil.RRs(soaCom),
	},
	{Qname: "c2.example.com.", Qtype: dns.TypeCNAME, Answer: testutil.RRs("c2.example.com. 300 IN CNAME v4.example.com.")},
	// Target outside the zone: the CNAME alone, NOERROR.
	{Qname: "ext.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("ext.example.com. 300 IN CNAME www.example.net.")},
	{Qname: "ext.example.com.", Qtype: dns.TypeMX, Answer: testutil.RRs("ext.example.com. 300 IN CNAME www.example.net.")},
	// In-zone target that does not exist: NXDOMAIN, CNAME in answer, SOA in authority.
	{
		Qname: "dangling.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
		Answer: testutil.RRs("dangling.example.com. 300 IN CNAME missing.example.com."),
		Ns:     testutil.RRs(soaCom),
	},
	{Qname: "dangling.example.com.", Qtype: dns.TypeCNAME, Answer: testutil.RRs("dangling.example.com. 300 IN CNAME missing.example.com.")},
	// Target an empty non-terminal: NODATA after the CNAME.
	{
		Qname: "toent.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs("toent.example.com. 300 IN CNAME b.c.example.com."),
		Ns:     testutil.RRs(soaCom),
	},
	// Target answered by a wildcard.
	{
		Qname: "towild.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs("towild.example.com. 300 IN CNAME x.w.example.com.", "x.w.example.com. 60 IN A 192.0.2.50"),
	},
	// A target in upper case is followed case-insensitively.
	{
		Qname: "upper.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs("upper.example.com. 300 IN CNAME WWW.Example.COM.", wwwA1, wwwA2),
	},
	// Chains: eight CNAMEs are followed, nine are not (see TestLookupServFail).
	{
		Qname: "l1.chain8.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs(
			"l1.chain8.example.com. 300 IN CNAME l2.chain8.example.com.",
			"l2.chain8.example.com. 300 IN CNAME l3.chain8.example.com.",
			"l3.chain8.example.com. 300 IN CNAME l4.chain8.example.com.",
			"l4.chain8.example.com. 300 IN CNAME l5.chain8.example.com.",
			"l5.chain8.example.com. 300 IN CNAME l6.chain8.example.com.",
			"l6.chain8.example.com. 300 IN CNAME l7.chain8.example.com.",
			"l7.chain8.example.com. 300 IN CNAME l8.chain8.example.com.",
			"l8.chain8.example.com. 300 IN CNAME l9.chain8.example.com.",
			"l9.chain8.example.com. 60 IN A 192.0.2.8",
		),
	},
	{Qname: "loop1.example.com.", Qtype: dns.TypeCNAME, Answer: testutil.RRs("loop1.example.com. 300 IN CNAME loop2.example.com.")},

	// Wildcards (RFC 4592).
	{Qname: "x.w.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("x.w.example.com. 60 IN A 192.0.2.50")},
	{Qname: "y.x.w.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("y.x.w.example.com. 60 IN A 192.0.2.50")},
	{Qname: "z.y.x.w.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("z.y.x.w.example.com. 60 IN A 192.0.2.50")},
	{Qname: "x.w.example.com.", Qtype: dns.TypeANY, Answer: testutil.RRs("x.w.example.com. 60 IN A 192.0.2.50")},
	// The wildcard without the type asked: NODATA.
	{Qname: "x.w.example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaCom)},
	{Qname: "x.w.example.com.", Qtype: dns.TypeTXT, Ns: testutil.RRs(soaCom)},
	{Qname: "x.w.example.com.", Qtype: dns.TypeCNAME, Ns: testutil.RRs(soaCom)},
	// Never the parent of the wildcard: an empty non-terminal.
	{Qname: "w.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	// The wildcard owner asked literally.
	{Qname: "*.w.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("*.w.example.com. 60 IN A 192.0.2.50")},
	// Existing names and ENTs below block it.
	{Qname: "a.b.w.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("a.b.w.example.com. 60 IN A 192.0.2.51")},
	{Qname: "a.b.w.example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaCom)},
	{Qname: "b.w.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "x.b.w.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "x.a.b.w.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	// Below the wildcard owner itself: its closest encloser is "*.w", which has no wildcard child.
	{Qname: "x.*.w.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	// A wildcard elsewhere does not leak into siblings or into names above it.
	{Qname: "x.wa.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "x.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	// A wildcard CNAME synthesizes a CNAME owned by the query name.
	{
		Qname: "x.wc.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs("x.wc.example.com. 300 IN CNAME www.example.com.", wwwA1, wwwA2),
	},
	{
		Qname: "y.x.wc.example.com.", Qtype: dns.TypeAAAA,
		Answer: testutil.RRs("y.x.wc.example.com. 300 IN CNAME www.example.com.", wwwAAAA),
	},
	{Qname: "x.wc.example.com.", Qtype: dns.TypeCNAME, Answer: testutil.RRs("x.wc.example.com. 300 IN CNAME www.example.com.")},
	{Qname: "x.wc.example.com.", Qtype: dns.TypeANY, Answer: testutil.RRs("x.wc.example.com. 300 IN CNAME www.example.com.")},
	{
		Qname: "x.wc.example.com.", Qtype: dns.TypeMX,
		Answer: testutil.RRs("x.wc.example.com. 300 IN CNAME www.example.com."),
		Ns:     testutil.RRs(soaCom),
	},
	{Qname: "x.we.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("x.we.example.com. 300 IN CNAME www.example.net.")},
	{
		Qname: "x.wd.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
		Answer: testutil.RRs("x.wd.example.com. 300 IN CNAME missing.example.com."),
		Ns:     testutil.RRs(soaCom),
	},
	{Qname: "wc.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	// An empty non-terminal wildcard synthesizes NODATA (RFC 4592 §2.2.2).
	{Qname: "q.e.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "a.q.e.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "*.e.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "a.*.e.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("a.*.e.example.com. 60 IN A 192.0.2.70")},
	{Qname: "b.*.e.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},

	// Apex.
	{Qname: "example.com.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soaCom)},
	{
		Qname: "example.com.", Qtype: dns.TypeNS,
		Answer: testutil.RRs(
			"example.com. 60 IN NS dns1.kube-system.example.com.",
			"example.com. 60 IN NS dns2.kube-system.example.com.",
		),
		Extra: testutil.RRs(
			"dns1.kube-system.example.com. 60 IN A 192.0.2.53",
			"dns1.kube-system.example.com. 60 IN AAAA 2001:db8::53",
			"dns2.kube-system.example.com. 60 IN A 192.0.2.54",
		),
	},
	{Qname: "example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("example.com. 60 IN A 192.0.2.100")},
	{Qname: "example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaCom)},
	{Qname: "example.com.", Qtype: dns.TypeMX, Ns: testutil.RRs(soaCom)},
	{Qname: "example.com.", Qtype: dns.TypeCNAME, Ns: testutil.RRs(soaCom)},
	{Qname: "example.com.", Qtype: dns.TypeANY, Answer: testutil.RRs(soaCom)},
	// The nameserver names are ordinary names.
	{
		Qname: "dns1.kube-system.example.com.", Qtype: dns.TypeAAAA,
		Answer: testutil.RRs("dns1.kube-system.example.com. 60 IN AAAA 2001:db8::53"),
	},

	// ANY (RFC 8482): one RRset, never the whole name.
	{Qname: "www.example.com.", Qtype: dns.TypeANY, Answer: testutil.RRs(wwwA1, wwwA2)},
	{Qname: "v6.example.com.", Qtype: dns.TypeANY, Answer: testutil.RRs("v6.example.com. 60 IN AAAA 2001:db8::10")},
	{Qname: "c.example.com.", Qtype: dns.TypeANY, Ns: testutil.RRs(soaCom)},
	{Qname: "w.example.com.", Qtype: dns.TypeANY, Ns: testutil.RRs(soaCom)},

	// Case: the question keeps its case (checked by qtCheck), and so do the
	// answers' owners that are the query name (RFC 4343 §4.1); every other
	// name is as published.
	{Qname: "WwW.ExAmPlE.CoM.", Qtype: dns.TypeA, Answer: testutil.RRs("WwW.ExAmPlE.CoM. 60 IN A 192.0.2.1", "WwW.ExAmPlE.CoM. 60 IN A 192.0.2.2")},
	{Qname: "X.W.Example.COM.", Qtype: dns.TypeA, Answer: testutil.RRs("X.W.Example.COM. 60 IN A 192.0.2.50")},
	{Qname: "ALIAS.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("ALIAS.example.com. 300 IN CNAME www.example.com.", wwwA1, wwwA2)},
	{Qname: "MISSING.Example.Com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "EXAMPLE.COM.", Qtype: dns.TypeSOA, Answer: testutil.RRs("EXAMPLE.COM. 60 IN SOA dns1.kube-system.example.com. hostmaster.example.com. 0 300 60 604800 60")},
}

func TestLookup(t *testing.T) {
	g := lookupGateway(t)
	for _, tc := range lookupCases {
		qtCheck(t, g, tc)
	}
}

// TestLookupServFail: CNAME loops answer SERVFAIL, which ServeDNS returns
// without writing, as CoreDNS expects. A chain longer than maxChain is no
// loop: it is answered as far as maxChain goes, NOERROR, and the resolver
// follows the rest.
func TestLookupServFail(t *testing.T) {
	g := lookupGateway(t)
	for _, q := range []struct {
		name  string
		qtype uint16
	}{
		{"loop1.example.com.", dns.TypeA},
		{"loop2.example.com.", dns.TypeAAAA},
		{"self.example.com.", dns.TypeA},
		{"self.example.com.", dns.TypeMX},
	} {
		m := new(dns.Msg)
		m.SetQuestion(q.name, q.qtype)
		code, resp := qtServe(t, g, m)
		if code != dns.RcodeServerFailure || resp != nil {
			t.Errorf("%s %s: got %s and %v, want SERVFAIL returned and nothing written", q.name, dns.TypeToString[q.qtype], dns.RcodeToString[code], resp)
		}
	}
	var links []string
	for i := 1; i <= 9; i++ {
		links = append(links, fmt.Sprintf("l%d.chain9.example.com. 300 IN CNAME l%d.chain9.example.com.", i, i+1))
	}
	qtCheck(t, g, test.Case{Qname: "l1.chain9.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs(links...)})
	// The ninth link of chain9 is reachable from the second one.
	qtCheck(t, g, test.Case{
		Qname: "l2.chain9.example.com.", Qtype: dns.TypeA,
		Answer: testutil.RRs(
			"l2.chain9.example.com. 300 IN CNAME l3.chain9.example.com.",
			"l3.chain9.example.com. 300 IN CNAME l4.chain9.example.com.",
			"l4.chain9.example.com. 300 IN CNAME l5.chain9.example.com.",
			"l5.chain9.example.com. 300 IN CNAME l6.chain9.example.com.",
			"l6.chain9.example.com. 300 IN CNAME l7.chain9.example.com.",
			"l7.chain9.example.com. 300 IN CNAME l8.chain9.example.com.",
			"l8.chain9.example.com. 300 IN CNAME l9.chain9.example.com.",
			"l9.chain9.example.com. 300 IN CNAME l10.chain9.example.com.",
			"l10.chain9.example.com. 60 IN A 192.0.2.9",
		),
	})
}

// TestLookupApexNameservers: glue for in-zone nameserver names only; an
// absolute nameserver name outside every zone gets none.
func TestLookupApexNameservers(t *testing.T) {
	g, _ := qtGateway(t, []string{"example.com."}, func(g *Gateway) {
		g.apex = "ns1.example.com."
		g.secondary = "ns.example.net."
		g.ttl = 30
	}, map[string][]string{
		"Service/default/ns1": {"ns1.example.com. 30 IN A 192.0.2.53", "ns1.example.com. 30 IN AAAA 2001:db8::53"},
		"Service/default/www": {"www.example.com. 30 IN A 192.0.2.1"},
		// NS records an object publishes at the apex do not replace the configured ones.
		"DNSEndpoint/default/apexns": {"example.com. 30 IN NS evil.example.net."},
	})
	soa := "example.com. 30 IN SOA ns1.example.com. hostmaster.example.com. 0 300 60 604800 30"
	for _, tc := range []test.Case{
		{
			Qname: "example.com.", Qtype: dns.TypeNS,
			Answer: testutil.RRs("example.com. 30 IN NS ns1.example.com.", "example.com. 30 IN NS ns.example.net."),
			Extra:  testutil.RRs("ns1.example.com. 30 IN A 192.0.2.53", "ns1.example.com. 30 IN AAAA 2001:db8::53"),
		},
		{Qname: "example.com.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soa)},
		{Qname: "missing.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soa)},
		{Qname: "www.example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soa)},
	} {
		qtCheck(t, g, tc)
	}

	// Without any published nameserver address: NS without glue.
	g, _ = qtGateway(t, []string{"example.com."}, nil, nil)
	qtCheck(t, g, test.Case{
		Qname: "example.com.", Qtype: dns.TypeNS,
		Answer: testutil.RRs("example.com. 60 IN NS dns1.kube-system.example.com."),
	})
	qtCheck(t, g, test.Case{Qname: "example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)})
}

// TestLookupSerialFollowsData: the SOA served changes its serial when data
// changes, and the served data changes with it.
func TestLookupSerialFollowsData(t *testing.T) {
	g, clk := qtGateway(t, []string{"example.com."}, nil, map[string][]string{
		"Service/default/www": {"www.example.com. 60 IN A 192.0.2.1"},
	})
	serialOf := func() uint32 {
		_, resp := qtServe(t, g, new(dns.Msg).SetQuestion("example.com.", dns.TypeSOA))
		return resp.Answer[0].(*dns.SOA).Serial
	}
	s1 := serialOf()
	if want := g.index.Snapshot().Serial(0); s1 != want {
		t.Fatalf("served serial %d, index serial %d", s1, want)
	}
	if want := uint32(clk.Now().Unix()); s1 != want {
		t.Fatalf("serial %d, want the clock %d", s1, want)
	}

	clk.Add(5 * time.Second)
	g.index.Update("Service/default/www", testutil.RRs("www.example.com. 60 IN A 192.0.2.2"))
	s2 := serialOf()
	if s2 != s1+5 {
		t.Errorf("serial after a change %d, want %d", s2, s1+5)
	}
	qtCheck(t, g, test.Case{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.example.com. 60 IN A 192.0.2.2")})

	// An update that changes nothing keeps the serial.
	clk.Add(5 * time.Second)
	g.index.Update("Service/default/www", testutil.RRs("www.example.com. 60 IN A 192.0.2.2"))
	g.index.Update("Service/default/other", nil)
	if s3 := serialOf(); s3 != s2 {
		t.Errorf("serial after a no-op update %d, want %d", s3, s2)
	}

	// Removing the object: NXDOMAIN, new serial.
	clk.Add(time.Second)
	g.index.Update("Service/default/www", nil)
	if s4 := serialOf(); s4 != s2+6 {
		t.Errorf("serial after a removal %d, want %d", s4, s2+6)
	}
	qtCheck(t, g, test.Case{Qname: "www.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)})
}

// lookupNext is a next plugin that records that it was called and answers REFUSED with a marker.
type lookupNext struct{ calls int }

func (n *lookupNext) Name() string { return "next" }
func (n *lookupNext) ServeDNS(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	n.calls++
	m := new(dns.Msg)
	m.SetRcode(r, dns.RcodeRefused)
	m.Extra = testutil.RRs(`next.marker. 0 IN TXT "next"`)
	w.WriteMsg(m)
	return dns.RcodeRefused, nil
}

// TestLookupNextPlugin: names outside the zones go to the next plugin; with
// fallthrough so do NXDOMAIN answers, and only those.
func TestLookupNextPlugin(t *testing.T) {
	for _, fallthrough_ := range []bool{false, true} {
		t.Run(fmt.Sprintf("fall=%v", fallthrough_), func(t *testing.T) {
			g := lookupGateway(t)
			next := &lookupNext{}
			g.Next = next
			if fallthrough_ {
				g.Fall.SetZonesFromArgs(nil)
			}
			toNext := func(name string, qtype uint16) {
				t.Helper()
				before := next.calls
				code, resp := qtServe(t, g, new(dns.Msg).SetQuestion(name, qtype))
				if next.calls != before+1 || code != dns.RcodeRefused || resp == nil || len(resp.Extra) != 1 {
					t.Errorf("%s %s: not passed to the next plugin (code %s, resp %v)", name, dns.TypeToString[qtype], dns.RcodeToString[code], resp)
				}
			}
			toNext("www.example.net.", dns.TypeA)
			toNext("example.org.", dns.TypeSOA)
			toNext("com.", dns.TypeNS)
			toNext(".", dns.TypeNS)
			toNext("badexample.com.", dns.TypeA)
			if fallthrough_ {
				toNext("missing.example.com.", dns.TypeA)
				toNext("x.b.w.example.com.", dns.TypeAAAA)
				toNext("missing.example.com.", dns.TypeMX)
			} else {
				qtCheck(t, g, test.Case{Qname: "missing.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)})
			}
			// NODATA, positive answers and NXDOMAIN after a CNAME are answered here.
			before := next.calls
			qtCheck(t, g, test.Case{Qname: "v6.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)})
			qtCheck(t, g, test.Case{Qname: "b.c.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)})
			qtCheck(t, g, test.Case{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs(wwwA1, wwwA2)})
			qtCheck(t, g, test.Case{
				Qname: "dangling.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
				Answer: testutil.RRs("dangling.example.com. 300 IN CNAME missing.example.com."),
				Ns:     testutil.RRs(soaCom),
			})
			if next.calls != before {
				t.Errorf("next plugin called %d times for answers of the zone", next.calls-before)
			}
		})
	}
	// Without a next plugin, an outside name is SERVFAIL (plugin.NextOrFailure).
	g := lookupGateway(t)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if code, err := g.ServeDNS(context.Background(), rec, new(dns.Msg).SetQuestion("www.example.net.", dns.TypeA)); code != dns.RcodeServerFailure || err == nil || rec.Msg != nil {
		t.Errorf("outside name without next: got %s, %v, %v", dns.RcodeToString[code], err, rec.Msg)
	}
}

// TestLookupRefusals: requests that are not plain queries of the zone's class,
// and queries before the informers have synced, get an error code returned
// for the server to write.
func TestLookupRefusals(t *testing.T) {
	g := lookupGateway(t)
	query := func(name string, qtype uint16) *dns.Msg { return new(dns.Msg).SetQuestion(name, qtype) }
	withClass := func(m *dns.Msg, class uint16) *dns.Msg { m.Question[0].Qclass = class; return m }
	withOpcode := func(m *dns.Msg, op int) *dns.Msg { m.Opcode = op; return m }
	for _, c := range []struct {
		desc string
		m    *dns.Msg
		want int
	}{
		{"AXFR", query("example.com.", dns.TypeAXFR), dns.RcodeRefused},
		{"IXFR", query("example.com.", dns.TypeIXFR), dns.RcodeRefused},
		{"AXFR below apex", query("www.example.com.", dns.TypeAXFR), dns.RcodeRefused},
		{"class CH", withClass(query("www.example.com.", dns.TypeA), dns.ClassCHAOS), dns.RcodeRefused},
		{"class HS", withClass(query("www.example.com.", dns.TypeTXT), dns.ClassHESIOD), dns.RcodeRefused},
		{"opcode UPDATE", withOpcode(query("example.com.", dns.TypeSOA), dns.OpcodeUpdate), dns.RcodeNotImplemented},
		{"opcode STATUS", withOpcode(query("www.example.com.", dns.TypeA), dns.OpcodeStatus), dns.RcodeNotImplemented},
	} {
		code, resp := qtServe(t, g, c.m)
		if code != c.want || resp != nil {
			t.Errorf("%s: got %s and %v, want %s returned and nothing written", c.desc, dns.RcodeToString[code], resp, dns.RcodeToString[c.want])
		}
	}

	// Class ANY is answered like IN.
	m := withClass(query("www.example.com.", dns.TypeA), dns.ClassANY)
	if code, resp := qtServe(t, g, m); code != dns.RcodeSuccess || resp == nil || len(resp.Answer) != 2 {
		t.Errorf("class ANY: got %s, %v", dns.RcodeToString[code], resp)
	}

	// Not ready: SERVFAIL returned, nothing written, for every kind of answer.
	g.ready.Store(false)
	for _, q := range []struct {
		name  string
		qtype uint16
	}{{"www.example.com.", dns.TypeA}, {"missing.example.com.", dns.TypeA}, {"example.com.", dns.TypeSOA}, {"example.com.", dns.TypeNS}} {
		code, resp := qtServe(t, g, query(q.name, q.qtype))
		if code != dns.RcodeServerFailure || resp != nil {
			t.Errorf("not ready, %s: got %s and %v, want SERVFAIL returned and nothing written", q.name, dns.RcodeToString[code], resp)
		}
	}
	g.ready.Store(true)
	qtCheck(t, g, test.Case{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs(wwwA1, wwwA2)})
}

// TestLookupTwoZones: two zones in one Gateway are independent: own SOA, own
// NS, own names and wildcards.
func TestLookupTwoZones(t *testing.T) {
	g, _ := qtGateway(t, []string{"example.com.", "example.org."}, nil, map[string][]string{
		"Ingress/default/web": {
			"www.example.com. 60 IN A 192.0.2.1",
			"www.example.org. 60 IN A 198.51.100.1",
		},
		"Ingress/default/wild":  {"*.example.org. 60 IN A 198.51.100.2"},
		"Ingress/default/cross": {"cross.example.com. 300 IN CNAME www.example.org."},
		"Service/kube-system/dns1": {
			"dns1.kube-system.example.com. 60 IN A 192.0.2.53",
			"dns1.kube-system.example.org. 60 IN A 198.51.100.53",
		},
	})
	soaOrg := qtSOA("example.org.")
	for _, tc := range []test.Case{
		{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.example.com. 60 IN A 192.0.2.1")},
		{Qname: "www.example.org.", Qtype: dns.TypeA, Answer: testutil.RRs("www.example.org. 60 IN A 198.51.100.1")},
		{Qname: "www.example.org.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaOrg)},
		{Qname: "missing.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
		// The wildcard of example.org. answers there only.
		{Qname: "missing.example.org.", Qtype: dns.TypeA, Answer: testutil.RRs("missing.example.org. 60 IN A 198.51.100.2")},
		{Qname: "example.com.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soaCom)},
		{Qname: "example.org.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soaOrg)},
		{Qname: "example.org.", Qtype: dns.TypeA, Ns: testutil.RRs(soaOrg)},
		{
			Qname: "example.org.", Qtype: dns.TypeNS,
			Answer: testutil.RRs("example.org. 60 IN NS dns1.kube-system.example.org."),
			Extra:  testutil.RRs("dns1.kube-system.example.org. 60 IN A 198.51.100.53"),
		},
		{
			Qname: "example.com.", Qtype: dns.TypeNS,
			Answer: testutil.RRs("example.com. 60 IN NS dns1.kube-system.example.com."),
			Extra:  testutil.RRs("dns1.kube-system.example.com. 60 IN A 192.0.2.53"),
		},
		// A CNAME into the other zone is not followed (the resolver does that).
		{Qname: "cross.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("cross.example.com. 300 IN CNAME www.example.org.")},
	} {
		qtCheck(t, g, tc)
	}
}

// TestLookupNestedZones: sub.example.com. is its own zone inside example.com.
func TestLookupNestedZones(t *testing.T) {
	g, _ := qtGateway(t, []string{"example.com.", "sub.example.com."}, nil, map[string][]string{
		"Ingress/default/web": {
			"www.example.com. 60 IN A 192.0.2.1",
			"www.sub.example.com. 60 IN A 192.0.2.2",
			"a.b.sub.example.com. 60 IN A 192.0.2.3",
		},
		"Ingress/default/wild": {"*.example.com. 60 IN A 192.0.2.9"},
		"Ingress/default/down": {"down.example.com. 300 IN CNAME www.sub.example.com."},
	})
	soaSub := qtSOA("sub.example.com.")
	for _, tc := range []test.Case{
		{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.example.com. 60 IN A 192.0.2.1")},
		{Qname: "www.sub.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.sub.example.com. 60 IN A 192.0.2.2")},
		{Qname: "www.sub.example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaSub)},
		{Qname: "b.sub.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaSub)},
		// The parent's wildcard does not reach into the child zone.
		{Qname: "missing.sub.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaSub)},
		{Qname: "missing.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("missing.example.com. 60 IN A 192.0.2.9")},
		{Qname: "sub.example.com.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soaSub)},
		{Qname: "sub.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaSub)},
		{Qname: "sub.example.com.", Qtype: dns.TypeNS, Answer: testutil.RRs("sub.example.com. 60 IN NS dns1.kube-system.sub.example.com.")},
		{Qname: "example.com.", Qtype: dns.TypeSOA, Answer: testutil.RRs(soaCom)},
		{Qname: "down.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("down.example.com. 300 IN CNAME www.sub.example.com.")},
	} {
		qtCheck(t, g, tc)
	}
}

// TestLookupRecorderCompat keeps the recorder-based style of CoreDNS's own
// plugin tests working against this plugin (tc.Msg, SortAndCheck).
func TestLookupRecorderCompat(t *testing.T) {
	g := lookupGateway(t)
	tc := test.Case{Qname: "alias.example.com.", Qtype: dns.TypeA,
		Answer: []dns.RR{
			test.CNAME("alias.example.com. 300 IN CNAME www.example.com."),
			test.A(wwwA1), test.A(wwwA2),
		}}
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := g.ServeDNS(context.Background(), rec, tc.Msg()); err != nil {
		t.Fatal(err)
	}
	if err := test.SortAndCheck(rec.Msg, tc); err != nil {
		t.Error(err)
	}
	if err := test.CNAMEOrder(rec.Msg); err != nil {
		t.Error(err)
	}
}

// TestLookupDelegation: NS records below the apex are zone cuts. Names at and
// below a cut get a referral (no AA, NS in authority, glue in additional); DS
// at the cut is the parent's, answered here.
func TestLookupDelegation(t *testing.T) {
	g, _ := qtGateway(t, []string{"example.com."}, nil, map[string][]string{
		"DNSEndpoint/ns/sub": {
			"sub.example.com. 60 IN NS ns1.sub.example.com.",
			"sub.example.com. 60 IN NS ns.example.net.",
			"ns1.sub.example.com. 60 IN A 192.0.2.77",
			"ns1.sub.example.com. 60 IN AAAA 2001:db8::77",
		},
		"DNSEndpoint/ns/deeper": {"deeper.sub.example.com. 60 IN NS ns.example.org."},
		"DNSEndpoint/ns/ab":     {"a.b.example.com. 60 IN NS ns.example.net."},
		"Ingress/ns/web":        {"www.example.com. 60 IN A 192.0.2.1"},
		"Ingress/ns/tosub":      {"tosub.example.com. 300 IN CNAME www.sub.example.com."},
		"Ingress/ns/wild":       {"*.example.com. 60 IN A 192.0.2.9"},
	})
	subNS := testutil.RRs("sub.example.com. 60 IN NS ns1.sub.example.com.", "sub.example.com. 60 IN NS ns.example.net.")
	subGlue := testutil.RRs("ns1.sub.example.com. 60 IN A 192.0.2.77", "ns1.sub.example.com. 60 IN AAAA 2001:db8::77")
	abNS := testutil.RRs("a.b.example.com. 60 IN NS ns.example.net.")
	for _, c := range []struct {
		tc test.Case
		aa bool
	}{
		{test.Case{Qname: "www.sub.example.com.", Qtype: dns.TypeA, Ns: subNS, Extra: subGlue}, false},
		{test.Case{Qname: "sub.example.com.", Qtype: dns.TypeNS, Ns: subNS, Extra: subGlue}, false},
		{test.Case{Qname: "sub.example.com.", Qtype: dns.TypeA, Ns: subNS, Extra: subGlue}, false},
		{test.Case{Qname: "sub.example.com.", Qtype: dns.TypeANY, Ns: subNS, Extra: subGlue}, false},
		{test.Case{Qname: "ns1.sub.example.com.", Qtype: dns.TypeA, Ns: subNS, Extra: subGlue}, false},
		// The highest cut wins; a wildcard above the cut does not answer below it.
		{test.Case{Qname: "x.deeper.sub.example.com.", Qtype: dns.TypeA, Ns: subNS, Extra: subGlue}, false},
		{test.Case{Qname: "x.sub.example.com.", Qtype: dns.TypeDS, Ns: subNS, Extra: subGlue}, false},
		{test.Case{Qname: "c.a.b.example.com.", Qtype: dns.TypeTXT, Ns: abNS}, false},
		// DS at the cut: the parent's data; there is none, so NODATA.
		{test.Case{Qname: "sub.example.com.", Qtype: dns.TypeDS, Ns: testutil.RRs(soaCom)}, true},
		{test.Case{Qname: "a.b.example.com.", Qtype: dns.TypeDS, Ns: testutil.RRs(soaCom)}, true},
		// Above the cuts: the zone as usual.
		{test.Case{Qname: "b.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)}, true},
		{test.Case{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.example.com. 60 IN A 192.0.2.1")}, true},
		{test.Case{Qname: "x.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("x.example.com. 60 IN A 192.0.2.9")}, true},
		{test.Case{Qname: "example.com.", Qtype: dns.TypeNS, Answer: testutil.RRs("example.com. 60 IN NS dns1.kube-system.example.com.")}, true},
		// A CNAME into a delegation: the CNAME (authoritative), then the referral.
		{test.Case{
			Qname: "tosub.example.com.", Qtype: dns.TypeA,
			Answer: testutil.RRs("tosub.example.com. 300 IN CNAME www.sub.example.com."),
			Ns:     subNS, Extra: subGlue,
		}, true},
	} {
		qtCheckAA(t, g, c.tc, c.aa)
	}
	// Without cuts, names below the former ones are answered from the zone.
	g.index.Update("DNSEndpoint/ns/sub", nil)
	g.index.Update("DNSEndpoint/ns/deeper", nil)
	qtCheckAA(t, g, test.Case{Qname: "c.a.b.example.com.", Qtype: dns.TypeTXT, Ns: abNS}, false)
	g.index.Update("DNSEndpoint/ns/ab", nil)
	qtCheck(t, g, test.Case{Qname: "www.sub.example.com.", Qtype: dns.TypeA, Answer: testutil.RRs("www.sub.example.com. 60 IN A 192.0.2.9")})
}

// TestIndexMergeServes: the merge rules as a client sees them.
func TestIndexMergeServes(t *testing.T) {
	g, clk := qtGateway(t, []string{"example.com."}, nil, map[string][]string{
		"Ingress/ns/a": {"www.example.com. 300 IN A 192.0.2.2", "lb.example.com. 60 IN CNAME www.example.net."},
		"Ingress/ns/b": {"www.example.com. 60 IN A 192.0.2.1", "lb.example.com. 60 IN AAAA 2001:db8::1"},
	})
	m := new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA)
	_, resp := qtServe(t, g, m)
	if got := qtStrings(resp.Answer); !slices.Equal(got, []string{
		"www.example.com.\t60\tIN\tA\t192.0.2.1", "www.example.com.\t60\tIN\tA\t192.0.2.2",
	}) {
		t.Errorf("www: %q", got)
	}
	// The answer is in the index's order, not sorted by the test.
	if resp.Answer[0].(*dns.A).A.String() != "192.0.2.1" {
		t.Errorf("answer order: %v", resp.Answer)
	}
	_, resp = qtServe(t, g, new(dns.Msg).SetQuestion("lb.example.com.", dns.TypeA))
	if len(resp.Answer) != 0 || len(resp.Ns) != 1 || resp.Rcode != dns.RcodeSuccess {
		t.Errorf("lb A (CNAME dropped for the AAAA): %v", resp)
	}
	clk.Add(time.Second)
	g.index.Update("Ingress/ns/b", nil)
	_, resp = qtServe(t, g, new(dns.Msg).SetQuestion("lb.example.com.", dns.TypeA))
	if len(resp.Answer) != 1 || resp.Answer[0].Header().Rrtype != dns.TypeCNAME {
		t.Errorf("lb A after the AAAA left: %v", resp)
	}
}

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
