package gateway

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// benchNames is the number of names in the benchmark index.
const benchNames = 100_000

// benchWriter is a ResponseWriter that keeps the last message and nothing
// else; with pack set it also packs it into a reused buffer, as the server
// does before it writes, which reads every record of the reply.
type benchWriter struct {
	test.ResponseWriter
	msg  *dns.Msg
	pack bool
	buf  []byte
}

func (w *benchWriter) WriteMsg(m *dns.Msg) error {
	w.msg = m
	if w.pack {
		var err error
		w.buf, err = m.PackBuffer(w.buf[:cap(w.buf)])
		return err
	}
	return nil
}

// benchGateway returns a ready Gateway for example.com. with benchNames
// objects of one A record each, a wildcard and a CNAME.
func benchGateway(b *testing.B) *Gateway {
	b.Helper()
	g := newGateway()
	g.Zones = []string{"example.com."}
	g.buildIndex()
	b.Cleanup(g.index.Close)
	hdr := func(name string, t uint16) dns.RR_Header {
		return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: 60}
	}
	for i := range benchNames {
		name := fmt.Sprintf("host%d.ns%d.example.com.", i, i%100)
		g.index.Update("Ingress/ns/host"+fmt.Sprint(i), []dns.RR{index.AddressRecord(hdr(name, dns.TypeA), netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))})
	}
	g.index.Update("Ingress/ns/wild", []dns.RR{&dns.A{Hdr: hdr("*.w.example.com.", dns.TypeA), A: net.IPv4(192, 0, 2, 1).To4()}})
	g.index.Update("Ingress/ns/alias", []dns.RR{&dns.CNAME{Hdr: hdr("alias.example.com.", dns.TypeCNAME), Target: "host5.ns5.example.com."}})
	g.index.Flush()
	g.ready.Store(true)
	if n := g.index.Snapshot().Len(); n < benchNames {
		b.Fatalf("%d names in the index", n)
	}
	return g
}

func BenchmarkServeDNS(b *testing.B) {
	g := benchGateway(b)
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		qname string
		qtype uint16
		rcode int
		n     int // answer records
	}{
		{"A", "host12345.ns45.example.com.", dns.TypeA, dns.RcodeSuccess, 1},
		{"NXDOMAIN", "nohost.ns45.example.com.", dns.TypeA, dns.RcodeNameError, 0},
		{"NODATA", "host12345.ns45.example.com.", dns.TypeAAAA, dns.RcodeSuccess, 0},
		{"wildcard", "foo.w.example.com.", dns.TypeA, dns.RcodeSuccess, 1},
		{"CNAME", "alias.example.com.", dns.TypeA, dns.RcodeSuccess, 2},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := new(dns.Msg).SetQuestion(c.qname, c.qtype)
			w := &benchWriter{}
			if _, err := g.ServeDNS(ctx, w, m); err != nil || w.msg == nil || w.msg.Rcode != c.rcode || len(w.msg.Answer) != c.n {
				b.Fatalf("unexpected reply %v, %v", w.msg, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				g.ServeDNS(ctx, w, m)
			}
		})
	}
}

// BenchmarkIndexUpdate changes the records of one object among benchNames.
func BenchmarkIndexUpdate(b *testing.B) {
	g := benchGateway(b)
	rrs := [2][]dns.RR{
		{testutil.RR("host777.ns77.example.com. 60 IN A 192.0.2.7")},
		{testutil.RR("host777.ns77.example.com. 60 IN A 192.0.2.8")},
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		g.index.Update("Ingress/ns/host777", rrs[i%2])
		i++
	}
}

// BenchmarkIndexUpdateNewName adds and removes an object whose name is new,
// with ancestors to create: the costlier kind of update.
func BenchmarkIndexUpdateNewName(b *testing.B) {
	g := benchGateway(b)
	rr := []dns.RR{testutil.RR("a.b.c.new.example.com. 60 IN A 192.0.2.7")}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			g.index.Update("Ingress/ns/new", rr)
		} else {
			g.index.Update("Ingress/ns/new", nil)
		}
		i++
	}
}

// BenchmarkServeDNSSpread asks for a different name each time, spread over
// the whole index, as real traffic does: the lookup then misses the CPU
// caches, which asking for one name over and over never does. The reply is
// packed, so the records' own cache misses count too.
func BenchmarkServeDNSSpread(b *testing.B) {
	g := benchGateway(b)
	ctx := context.Background()
	const spread = 1 << 14
	msgs := make([]*dns.Msg, spread)
	for i := range msgs {
		n := (i * 7919) % benchNames // a stride that visits the names out of order
		msgs[i] = new(dns.Msg).SetQuestion(fmt.Sprintf("host%d.ns%d.example.com.", n, n%100), dns.TypeA)
	}
	w := &benchWriter{pack: true, buf: make([]byte, dns.MaxMsgSize)}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		g.ServeDNS(ctx, w, msgs[i%spread])
		i++
	}
	if w.msg == nil || len(w.msg.Answer) != 1 {
		b.Fatalf("unexpected reply %v", w.msg)
	}
}
