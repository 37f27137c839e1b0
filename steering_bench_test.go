package gateway

import (
	"context"
	"net"
	"testing"

	"github.com/coredns/coredns/plugin/metadata"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// BenchmarkServeSteered: ServeDNS of names of two objects, each one address,
// among benchNames others, packed as the server packs replies: plain (both
// addresses), weighted (one, drawn), geo (one, by the client's location from
// the geoip plugin's metadata and an ECS option), and the plain name asked
// with the same ECS option and metadata. A steered name must cost at most
// 1.1 × a plain one (docs/benchmarks.md).
func BenchmarkServeSteered(b *testing.B) {
	g := benchGateway(b)
	hdr := func(name string) dns.RR_Header {
		return dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}
	}
	for _, o := range []struct {
		key, name string
		ip        byte
		claim     index.Claim
	}{
		{"Service/a/one", "plain.example.com.", 1, index.Claim{Namespace: "a"}},
		{"Service/a/two", "plain.example.com.", 2, index.Claim{Namespace: "a"}},
		{"Service/a/three", "weighted.example.com.", 1, index.Claim{Namespace: "a", Weight: 3}},
		{"Service/a/four", "weighted.example.com.", 2, index.Claim{Namespace: "a", Weight: 1}},
		{"Service/a/five", "geo.example.com.", 1, index.Claim{Namespace: "a", Location: index.Location{Continent: "EU", Country: "DE"}}},
		{"Service/a/six", "geo.example.com.", 2, index.Claim{Namespace: "a", Location: index.Location{Continent: "NA", Country: "US"}}},
	} {
		g.index.UpdateClaim(o.key, o.claim, []dns.RR{&dns.A{Hdr: hdr(o.name), A: net.IPv4(192, 0, 2, o.ip).To4()}})
	}
	located := metadata.ContextWithMetadata(context.Background())
	for k, v := range map[string]string{metaCountry: "DE", metaContinent: "EU", metaRegions: "DE-HE"} {
		metadata.SetValueFunc(located, k, func() string { return v })
	}
	ecs := func(m *dns.Msg) *dns.Msg {
		m.SetEdns0(1232, false)
		o := m.IsEdns0()
		o.Option = append(o.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.IPv4(198, 51, 100, 0).To4()})
		return m
	}
	for _, c := range []struct {
		desc  string
		ctx   context.Context
		m     *dns.Msg
		n     int
		scope int
	}{
		{"plain", context.Background(), new(dns.Msg).SetQuestion("plain.example.com.", dns.TypeA), 2, -1},
		{"weighted", context.Background(), new(dns.Msg).SetQuestion("weighted.example.com.", dns.TypeA), 1, -1},
		{"plain_ecs", located, ecs(new(dns.Msg).SetQuestion("plain.example.com.", dns.TypeA)), 2, 0},
		{"geo_ecs", located, ecs(new(dns.Msg).SetQuestion("geo.example.com.", dns.TypeA)), 1, 24},
	} {
		b.Run(c.desc, func(b *testing.B) {
			w := &benchWriter{pack: true, buf: make([]byte, dns.MaxMsgSize)}
			if _, err := g.ServeDNS(c.ctx, w, c.m); err != nil || w.msg == nil || len(w.msg.Answer) != c.n || scopeOf(w.msg) != c.scope {
				b.Fatalf("unexpected reply %v, %v", w.msg, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				g.ServeDNS(c.ctx, w, c.m)
			}
		})
	}
}
