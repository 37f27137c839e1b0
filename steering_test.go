package gateway

import (
	"context"
	"encoding/hex"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin/metadata"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

func TestSteeringOptions(t *testing.T) {
	for _, c := range []struct {
		corefile string
		err      string // part of the error, "" for none
		check    func(*Gateway) bool
	}{
		{corefile: "k8s_gateway example.com {\n weight 5\n location continent=EU country=de\n default_location continent=NA\n}",
			check: func(g *Gateway) bool {
				return g.weight == 5 && g.location == index.Location{Continent: "EU", Country: "DE"} && g.defaultLocation == index.Location{Continent: "NA"}
			}},
		{corefile: "k8s_gateway example.com {\n cluster one {\n  kubeconfig " + testutil.Kubeconfig(t) + "\n  weight 3\n  location region=us-east-1\n }\n}",
			check: func(g *Gateway) bool {
				return len(g.clusters) == 1 && g.clusters[0].opts.weight == 3 && g.clusters[0].opts.location.Region == "US-EAST-1"
			}},
		{corefile: "k8s_gateway example.com {\n weight 0\n}", err: "from 1 to 1000"},
		{corefile: "k8s_gateway example.com {\n weight 1001\n}", err: "from 1 to 1000"},
		{corefile: "k8s_gateway example.com {\n weight\n}", err: "weight N"},
		{corefile: "k8s_gateway example.com {\n location\n}", err: "location [continent=CODE]"},
		{corefile: "k8s_gateway example.com {\n location planet=earth\n}", err: "unknown key"},
		{corefile: "k8s_gateway example.com {\n default_location country=D/E\n}", err: "location part"},
	} {
		g, err := parse(caddy.NewTestController("dns", c.corefile))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one with %q", c.corefile, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.corefile, err)
		case c.err == "" && !c.check(g):
			t.Errorf("%q: options not as set", c.corefile)
		}
	}
}

// serveFrom asks g for name with the geoip metadata of country (none when
// empty) and an ECS option of subnet (none when empty).
func serveFrom(t *testing.T, g *Gateway, name string, country, continent, subnet string) *dns.Msg {
	t.Helper()
	ctx := context.Background()
	if country != "" {
		ctx = metadata.ContextWithMetadata(ctx)
		metadata.SetValueFunc(ctx, metaCountry, func() string { return country })
		metadata.SetValueFunc(ctx, metaContinent, func() string { return continent })
		metadata.SetValueFunc(ctx, metaRegions, func() string { return "" })
	}
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	if subnet != "" {
		ip, ipnet, err := net.ParseCIDR(subnet)
		if err != nil {
			t.Fatal(err)
		}
		bits, _ := ipnet.Mask.Size()
		m.SetEdns0(1232, false)
		m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: uint8(bits), Address: ip})
	}
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := g.ServeDNS(ctx, rec, m); err != nil {
		t.Fatal(err)
	}
	return rec.Msg
}

// scopeOf returns the ECS scope of a reply, or -1 without ECS.
func scopeOf(m *dns.Msg) int {
	if o := m.IsEdns0(); o != nil {
		for _, opt := range o.Option {
			if e, ok := opt.(*dns.EDNS0_SUBNET); ok {
				return int(e.SourceScope)
			}
		}
	}
	return -1
}

// Services with the steering annotations, read through informers, answered
// by location and by weight, with the ECS scope of RFC 7871.
func TestSteeringServe(t *testing.T) {
	client := fake.NewSimpleClientset()
	g := k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) { g.defaultLocation = index.Location{Continent: "NA"} })
	for _, s := range []struct{ name, ip, hostname, loc, weight string }{
		{"eu", "192.0.2.1", "geo.example.com", "continent=EU,country=DE", ""},
		{"na", "192.0.2.2", "geo.example.com", "continent=NA", ""},
		{"heavy", "192.0.2.3", "weighted.example.com", "", "3"},
		{"light", "192.0.2.4", "weighted.example.com", "", "1"},
	} {
		svc := testutil.NamedService("apps", s.name, s.ip)
		svc.Annotations = map[string]string{"coredns.io/hostname": s.hostname}
		if s.loc != "" {
			svc.Annotations[source.LocationAnnotation] = s.loc
		}
		if s.weight != "" {
			svc.Annotations[source.WeightAnnotation] = s.weight
		}
		k8sCreate(t, client, svc)
	}
	// The whole RRsets, as a zone transfer has them.
	testutil.Eventually(t, "every Service published", func() string {
		for _, name := range []string{"weighted.example.com.", "geo.example.com."} {
			if rrs, _, _, _ := g.index.Snapshot().Lookup(0, name, dns.TypeA); len(rrs) != 2 {
				return name + " has not both addresses"
			}
		}
		return ""
	})

	for _, c := range []struct {
		country, continent, subnet, want string
		scope                            int
	}{
		{"DE", "EU", "198.51.100.0/24", "192.0.2.1", 24},
		{"US", "NA", "203.0.113.0/24", "192.0.2.2", 24},
		{"JP", "AS", "", "192.0.2.2", -1}, // no match: the default, NA
		{"", "", "", "192.0.2.2", -1},     // unknown: the default
	} {
		m := serveFrom(t, g, "geo.example.com.", c.country, c.continent, c.subnet)
		if len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != c.want || !m.Authoritative {
			t.Errorf("from %s: %v, want %s", c.country, m.Answer, c.want)
		}
		if got := scopeOf(m); got != c.scope {
			t.Errorf("from %s: ECS scope %d, want %d", c.country, got, c.scope)
		}
	}

	counts := map[string]int{}
	const n = 4000
	for range n {
		m := serveFrom(t, g, "weighted.example.com.", "", "", "198.51.100.0/24")
		if len(m.Answer) != 1 {
			t.Fatalf("weighted answer %v", m.Answer)
		}
		if scopeOf(m) != 0 {
			t.Fatalf("a weighted answer depends on no location: ECS scope %d, want 0", scopeOf(m))
		}
		counts[m.Answer[0].(*dns.A).A.String()]++
	}
	// 3:1; the tolerance is 5 standard deviations of a binomial of n draws.
	if got := float64(counts["192.0.2.3"]) / n; got < 0.75-5*0.00685 || got > 0.75+5*0.00685 {
		t.Errorf("share of the weight-3 Service %.3f of %d, want 0.75", got, n)
	}
	// A name that is not steered: scope 0, every address.
	m := serveFrom(t, g, "eu.apps.example.com.", "DE", "EU", "198.51.100.0/24")
	if len(m.Answer) != 1 || scopeOf(m) != 0 {
		t.Errorf("plain name: %v, scope %d", m.Answer, scopeOf(m))
	}
}

// TestSteeringDocSnippets: the k8s_gateway blocks of docs/features/traffic-steering.md
// parse, with a kubeconfig of the test's for the files they name.
func TestSteeringDocSnippets(t *testing.T) {
	doc, err := os.ReadFile("docs/features/traffic-steering.md")
	if err != nil {
		t.Fatal(err)
	}
	kc := testutil.Kubeconfig(t)
	blocks := 0
	for i, part := range strings.Split(string(doc), "```") {
		if i%2 == 0 || !strings.Contains(part, "k8s_gateway ") {
			continue
		}
		block := part[strings.Index(part, "k8s_gateway "):]
		// The block ends at the brace that closes it.
		depth, end := 0, 0
		for j, r := range block {
			if r == '{' {
				depth++
			} else if r == '}' {
				if depth--; depth == 0 {
					end = j + 1
					break
				}
			}
		}
		block = regexp.MustCompile(`/etc/coredns/\S+\.kubeconfig`).ReplaceAllString(block[:end], kc)
		if _, err := parse(caddy.NewTestController("dns", block)); err != nil {
			t.Errorf("%s\n: %v", block, err)
		}
		blocks++
	}
	if blocks < 2 {
		t.Errorf("%d k8s_gateway blocks found in the page, want 2", blocks)
	}
}

// TestMalformedSubnetFormErr: a query whose ECS option is malformed (RFC
// 7871 §6) is answered FORMERR, whether miekg/dns refuses it while reading
// the message (as CoreDNS's server then answers) or the plugin does; a
// well-formed one is answered and echoed.
func TestMalformedSubnetFormErr(t *testing.T) {
	g, _ := qtGateway(t, []string{"example.com."}, nil, map[string][]string{"a": {"www.example.com. 60 IN A 192.0.2.1"}})
	for _, c := range []struct {
		name, data string // the option's data, in hex
		want       int
	}{
		{"IPv4 /24", "00011800c00002", dns.RcodeSuccess},
		{"IPv4 /25", "00011900c0000280", dns.RcodeSuccess},
		{"IPv6 /56", "0002380020010db8000000", dns.RcodeSuccess},
		{"family 0, prefix 0 (dig)", "00000000", dns.RcodeSuccess},
		{"IPv4 /0", "00010000", dns.RcodeSuccess},
		{"IPv4 prefix 33", "000121c0000200", dns.RcodeFormatError},
		{"IPv6 prefix 129", "00028100200100", dns.RcodeFormatError},
		{"unknown family", "00030000", dns.RcodeFormatError},
		{"family 0 with a prefix", "00000800", dns.RcodeFormatError},
		{"too short", "000118", dns.RcodeFormatError},
		{"scope in a query", "00011808c00002", dns.RcodeFormatError},
		{"IPv4 bit beyond the prefix", "00011700c00003", dns.RcodeFormatError},
		{"IPv4 octet beyond the prefix", "00011800c0000201", dns.RcodeFormatError},
		{"IPv6 bit beyond the prefix", "0002340020010db8000001", dns.RcodeFormatError},
	} {
		data, err := hex.DecodeString(c.data)
		if err != nil {
			t.Fatal(err)
		}
		q := new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA)
		q.SetEdns0(1232, false)
		q.IsEdns0().Option = append(q.IsEdns0().Option, &dns.EDNS0_LOCAL{Code: dns.EDNS0SUBNET, Data: data})
		wire, err := q.Pack()
		if err != nil {
			t.Fatal(err)
		}
		r := new(dns.Msg)
		if err := r.Unpack(wire); err != nil {
			if c.want != dns.RcodeFormatError {
				t.Errorf("%s: miekg/dns refuses it (FORMERR): %v", c.name, err)
			}
			continue
		}
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		if _, err := g.ServeDNS(context.Background(), rec, r); err != nil {
			t.Fatal(err)
		}
		if rec.Msg == nil || rec.Msg.Rcode != c.want {
			t.Errorf("%s: %v, want %s", c.name, rec.Msg, dns.RcodeToString[c.want])
			continue
		}
		if c.want == dns.RcodeSuccess && (len(rec.Msg.Answer) != 1 || scopeOf(rec.Msg) != 0) {
			t.Errorf("%s: answer %v, ECS scope %d; want the address, scope 0", c.name, rec.Msg.Answer, scopeOf(rec.Msg))
		}
	}
}
