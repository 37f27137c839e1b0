package gateway

import (
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"
)

// TestStaticNameservers: addresses given to apex answer for the nameserver
// name in each forward zone and are the NS answer's glue; a name outside the
// zones publishes nothing; a name with addresses is not read from a Service.
func TestStaticNameservers(t *testing.T) {
	g, _ := qtGateway(t, []string{"example.com.", "example.org.", "2.0.192.in-addr.arpa."}, func(g *Gateway) {
		g.apex, g.apexAddrs = "dns1.kube-system", []netip.Addr{netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("2001:db8::10")}
		g.secondary, g.secondaryAddrs = "ns2.example.net.", []netip.Addr{netip.MustParseAddr("203.0.113.20")}
	}, nil)
	g.publishStaticNameservers()
	for _, zone := range []string{"example.com.", "example.org."} {
		ns := "dns1.kube-system." + zone
		want := k8sExpect(t, "NOERROR", []string{zone + " 60 IN NS " + ns, zone + " 60 IN NS ns2.example.net."},
			ns+" 60 IN A 203.0.113.10", ns+" 60 IN AAAA 2001:db8::10")
		if got := k8sAnswer(g, zone, dns.TypeNS); got != want {
			t.Errorf("NS %s:\n got %s\nwant %s", zone, got, want)
		}
		if got, want := k8sAnswer(g, ns, dns.TypeA), k8sExpect(t, "NOERROR", []string{ns + " 60 IN A 203.0.113.10"}); got != want {
			t.Errorf("A %s: got %s, want %s", ns, got, want)
		}
	}
	if got := g.nameserverServices(); len(got) != 0 {
		t.Errorf("nameserver Services %q: a name with addresses is not a Service's", got)
	}
}

// TestParseNameserverAddresses: apex and secondary take addresses after the
// name; anything else than IP addresses is refused at its line.
func TestParseNameserverAddresses(t *testing.T) {
	g, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n apex ns1 203.0.113.10 2001:db8::10\n secondary ns2 ::ffff:203.0.113.20\n}"))
	if err != nil {
		t.Fatal(err)
	}
	if g.apex != "ns1" || !slices.Equal(g.apexAddrs, []netip.Addr{netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("2001:db8::10")}) ||
		!slices.Equal(g.secondaryAddrs, []netip.Addr{netip.MustParseAddr("203.0.113.20")}) {
		t.Errorf("apex %q %v, secondary %q %v", g.apex, g.apexAddrs, g.secondary, g.secondaryAddrs)
	}
	for _, c := range []struct{ line, want string }{
		{"apex ns1 lb.example.net", `apex ns1: "lb.example.net" is not an IP address`},
		{"secondary ns2 fe80::1%eth0", `secondary ns2: "fe80::1%eth0" is not an IP address`},
		{"apex ns1" + strings.Repeat(" 192.0.2.1", 17), "17 addresses, at most 16"},
	} {
		_, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n "+c.line+"\n}"))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "Testfile:2") {
			t.Errorf("%q: %v, want %q at Testfile:2", c.line, err, c.want)
		}
	}
}

// TestGlueDocSnippet: the k8s_gateway block of docs/guides/glue.md parses and
// gives the addresses it shows.
func TestGlueDocSnippet(t *testing.T) {
	doc, err := os.ReadFile("docs/guides/glue.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "~~~ corefile\n")
	snippet, _, ok2 := strings.Cut(after, "~~~\n")
	_, block, ok3 := strings.Cut(snippet, "    k8s_gateway {\n")
	body, _, ok4 := strings.Cut(block, "    }\n")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatalf("no k8s_gateway block in docs/guides/glue.md's corefile snippet:\n%s", snippet)
	}
	g, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n"+body+"}"))
	if err != nil {
		t.Fatalf("docs/guides/glue.md: %v", err)
	}
	if len(g.apexAddrs) != 2 || len(g.secondaryAddrs) != 1 {
		t.Errorf("docs/guides/glue.md: apex %v, secondary %v", g.apexAddrs, g.secondaryAddrs)
	}
}
