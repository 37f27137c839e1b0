package gateway

import (
	"context"
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/metadata"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// BenchmarkServeSteered: ServeDNS of names of two objects, each one address,
// among benchNames others, packed as the server packs replies: a name of one
// object (plain_one), plain (both addresses), weighted (one, drawn), geo (one, by the client's location from
// the geoip plugin's metadata and an ECS option), and the plain name asked
// with the same ECS option and metadata. A steered name must cost at most
// 1.1 × a plain one (docs/operations/benchmarks.md).
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
	one := func(name string, ip byte) {
		g.index.UpdateClaim("Service/a/"+name, index.Claim{Namespace: "a"}, []dns.RR{&dns.A{Hdr: hdr(name + ".example.com."), A: net.IPv4(192, 0, 2, ip).To4()}})
	}
	one("single", 9)
	for _, c := range []struct {
		desc  string
		ctx   context.Context
		m     *dns.Msg
		n     int
		scope int
	}{
		{"plain_one", context.Background(), new(dns.Msg).SetQuestion("single.example.com.", dns.TypeA), 1, -1},
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
			// CPU time of this thread as well as wall time: on a loaded
			// machine the wall time is mostly the wait for a core.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start, n := threadCPU(), 0
			for ; b.Loop(); n++ {
				g.ServeDNS(c.ctx, w, c.m)
			}
			b.ReportMetric(float64(threadCPU()-start)/float64(n), "cpu-ns/op")
		})
	}
}

// threadCPU returns the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
