package gateway

import (
	"context"
	"fmt"
	"testing"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
)

// fitGateway serves example.com. with an SRV RRset of 8 targets whose
// addresses (A and AAAA each) do not fit in 512 octets with it, and a
// delegation to 12 nameservers below it whose glue does not either.
func fitGateway(t *testing.T) *Gateway {
	t.Helper()
	var srv, deleg []string
	for i := 1; i <= 8; i++ {
		srv = append(srv, fmt.Sprintf("_big._tcp.example.com. 60 IN SRV 0 0 80 t%d.example.com.", i),
			fmt.Sprintf("t%d.example.com. 60 IN A 192.0.2.%d", i, i), fmt.Sprintf("t%d.example.com. 60 IN AAAA 2001:db8::%d", i, i))
	}
	for i := 1; i <= 12; i++ {
		deleg = append(deleg, fmt.Sprintf("sub.example.com. 60 IN NS n%d.sub.example.com.", i),
			fmt.Sprintf("n%d.sub.example.com. 60 IN A 192.0.2.%d", i, 100+i), fmt.Sprintf("n%d.sub.example.com. 60 IN AAAA 2001:db8::%d", i, 100+i))
	}
	g, _ := qtGateway(t, []string{"example.com."}, nil, map[string][]string{"DNSEndpoint/default/srv": srv, "DNSEndpoint/default/sub": deleg})
	return g
}

// fitServe sends m to g through CoreDNS's scrub, as the server does, and
// returns the reply as the client gets it.
func fitServe(t *testing.T, g *Gateway, m *dns.Msg, tcp bool) *dns.Msg {
	t.Helper()
	rec := dnstest.NewRecorder(&test.ResponseWriter{TCP: tcp})
	if _, err := g.ServeDNS(context.Background(), request.NewScrubWriter(m, rec), m); err != nil || rec.Msg == nil {
		t.Fatalf("ServeDNS: %v, wrote %v", err, rec.Msg)
	}
	return rec.Msg
}

// TestFitAdditional: an answer whose additional addresses do not fit the
// client's buffer loses addresses, not its TC bit (RFC 2181 §9), and the
// rest fits; with room, over TCP or with EDNS, it has them all. A referral
// whose glue does not fit is truncated with TC, as the scrub does it: glue
// is required (RFC 9471).
func TestFitAdditional(t *testing.T) {
	g := fitGateway(t)
	for _, c := range []struct {
		name      string
		edns      uint16 // 0: no EDNS
		tcp       bool
		wantExtra int // -1: fewer than all 16, more than none
	}{
		{"udp", 0, false, -1},
		{"udp-edns-512", 512, false, -1},
		{"udp-edns-1232", 1232, false, 16},
		{"tcp", 0, true, 16},
	} {
		m := new(dns.Msg).SetQuestion("_big._tcp.example.com.", dns.TypeSRV)
		if c.edns > 0 {
			m.SetEdns0(c.edns, false)
		}
		r := fitServe(t, g, m, c.tcp)
		extra := len(r.Extra)
		if r.IsEdns0() != nil {
			extra--
		}
		size := max(512, int(c.edns))
		switch {
		case r.Truncated || len(r.Answer) != 8:
			t.Errorf("%s: TC %v with %d SRV records, want no TC and all 8", c.name, r.Truncated, len(r.Answer))
		case c.wantExtra >= 0 && extra != c.wantExtra:
			t.Errorf("%s: %d additional records, want %d", c.name, extra, c.wantExtra)
		case c.wantExtra < 0 && (extra == 0 || extra >= 16):
			t.Errorf("%s: %d additional records, want some of the 16", c.name, extra)
		case !c.tcp && r.Len() > size:
			t.Errorf("%s: %d octets, more than %d", c.name, r.Len(), size)
		}
	}
	r := fitServe(t, g, new(dns.Msg).SetQuestion("x.sub.example.com.", dns.TypeA), false)
	if !r.Truncated || len(r.Ns) == 0 {
		t.Errorf("referral too large for 512 octets: TC %v with %d NS records, want TC", r.Truncated, len(r.Ns))
	}
}

// TestFitAdditionalLarge: a large RRset whose addresses do not all fit
// keeps as many of them as fit, no fewer, and leaving the others out costs a
// few measurements of the reply, not one per address left out (which made a
// query for 500 SRV targets over UDP cost a second of CPU).
func TestFitAdditionalLarge(t *testing.T) {
	const targets = 500 // 500 SRV records take about 18,000 octets, their addresses about 22,000
	var srv []string
	for i := 1; i <= targets; i++ {
		srv = append(srv, fmt.Sprintf("_big._tcp.example.com. 60 IN SRV 0 0 80 t%d.example.com.", i),
			fmt.Sprintf("t%d.example.com. 60 IN A 192.0.2.%d", i, i%250+1), fmt.Sprintf("t%d.example.com. 60 IN AAAA 2001:db8::%d", i, i))
	}
	g, _ := qtGateway(t, []string{"example.com."}, nil, map[string][]string{"DNSEndpoint/default/srv": srv})
	all := fitServe(t, g, new(dns.Msg).SetQuestion("_big._tcp.example.com.", dns.TypeSRV), true)
	if len(all.Answer) != targets || len(all.Extra) != 2*targets {
		t.Fatalf("over TCP: %d SRV records and %d addresses, want %d and %d", len(all.Answer), len(all.Extra), targets, 2*targets)
	}
	for _, c := range []struct {
		edns uint16 // 0: no EDNS
		tc   bool   // the SRV records themselves do not fit
	}{
		{0, true}, {4096, true}, {24576, false}, {32768, false}, {65535, false},
	} {
		m := new(dns.Msg).SetQuestion("_big._tcp.example.com.", dns.TypeSRV)
		budget := dns.MinMsgSize
		if c.edns > 0 {
			m.SetEdns0(c.edns, false)
			budget = int(c.edns) - dns.Len(m.IsEdns0())
		}
		r := fitServe(t, g, m, false)
		kept := len(r.Extra)
		if r.IsEdns0() != nil {
			kept--
		}
		// With one address more, the reply (without its OPT) would not fit.
		more := &dns.Msg{MsgHdr: all.MsgHdr, Compress: true, Question: all.Question, Answer: all.Answer, Extra: all.Extra[:min(kept+1, len(all.Extra))]}
		switch {
		case r.Truncated != c.tc || c.tc && kept != 0:
			t.Errorf("buffer %d: TC %v with %d addresses, want TC %v", c.edns, r.Truncated, kept, c.tc)
		case !c.tc && kept < len(all.Extra) && more.Len() <= budget:
			t.Errorf("buffer %d: %d addresses kept, but %d fit", c.edns, kept, kept+1)
		}
		udp := testing.AllocsPerRun(2, func() { fitServe(t, g, m, false) })
		tcp := testing.AllocsPerRun(2, func() { fitServe(t, g, m, true) })
		if udp-tcp > targets/2 {
			t.Errorf("buffer %d: %.0f allocations over UDP against %.0f over TCP: a measurement per address left out?", c.edns, udp, tcp)
		}
	}
}

// TestFitAdditionalOptions: the room for addresses is the client's buffer
// less the reply's OPT record, not the query's: a cookie or padding the
// reply does not echo takes none, an ECS echo takes its own. The reply keeps
// every address that fits (RFC 2181 §9), as BIND and Knot do.
func TestFitAdditionalOptions(t *testing.T) {
	g := fitGateway(t)
	const size = 600
	for _, c := range []struct {
		name string
		opts []dns.EDNS0
	}{
		{"none", nil},
		{"cookie", []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"}}},
		{"padding", []dns.EDNS0{&dns.EDNS0_PADDING{Padding: make([]byte, 200)}}},
		{"ecs", []dns.EDNS0{&dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: []byte{192, 0, 2, 0}}}},
	} {
		m := new(dns.Msg).SetQuestion("_big._tcp.example.com.", dns.TypeSRV)
		m.SetEdns0(size, false)
		m.IsEdns0().Option = c.opts
		r := fitServe(t, g, m, false)
		opt := r.IsEdns0()
		if r.Truncated || len(r.Answer) != 8 || opt == nil {
			t.Fatalf("%s: TC %v, %d SRV records, OPT %v", c.name, r.Truncated, len(r.Answer), opt)
		}
		extra := withoutOPTRecords(r.Extra)
		all := fitServe(t, g, m.Copy(), true)
		if len(extra) >= len(withoutOPTRecords(all.Extra)) {
			t.Fatalf("%s: all %d addresses kept in %d octets: the case tests nothing", c.name, len(extra), size)
		}
		more := r.Copy()
		more.Compress = true
		more.Extra = append(withoutOPTRecords(all.Extra)[:len(extra)+1], opt)
		if r.Len() > size || more.Len() <= size {
			t.Errorf("%s: %d addresses in %d octets, but %d would fit in %d", c.name, len(extra), r.Len(), len(extra)+1, size)
		}
	}
}

func withoutOPTRecords(rrs []dns.RR) []dns.RR {
	var out []dns.RR
	for _, rr := range rrs {
		if rr.Header().Rrtype != dns.TypeOPT {
			out = append(out, rr)
		}
	}
	return out
}
