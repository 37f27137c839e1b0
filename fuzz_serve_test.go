package gateway

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// fuzzObjects is a small zone with the shapes that make lookup branch:
// wildcards (plain, CNAME, below an ENT), CNAME chains, loops, out-of-zone
// targets, ENTs, a delegation, MX/SRV with glue, and a second and a nested zone.
var fuzzObjects = map[string][]string{
	"a": {
		"www.example.com. 60 IN A 192.0.2.1",
		"www.example.com. 60 IN AAAA 2001:db8::1",
		"example.com. 60 IN A 192.0.2.100",
		"dns1.kube-system.example.com. 60 IN A 192.0.2.53",
		"a.b.c.example.com. 60 IN A 192.0.2.2",
		`txt.example.com. 60 IN TXT "hello"`,
		"mail.example.com. 60 IN MX 10 www.example.com.",
		"_http._tcp.example.com. 60 IN SRV 0 0 80 www.example.com.",
	},
	"b": {
		"*.w.example.com. 60 IN A 192.0.2.50",
		"a.b.w.example.com. 60 IN A 192.0.2.51",
		"*.wc.example.com. 60 IN CNAME www.example.com.",
		"*.wl.example.com. 60 IN CNAME x.wl.example.com.",
		"a.*.e.example.com. 60 IN A 192.0.2.52",
	},
	"c": {
		"c1.example.com. 60 IN CNAME c2.example.com.",
		"c2.example.com. 60 IN CNAME www.example.com.",
		"loop1.example.com. 60 IN CNAME loop2.example.com.",
		"loop2.example.com. 60 IN CNAME loop1.example.com.",
		"ext.example.com. 60 IN CNAME www.example.net.",
		"dangling.example.com. 60 IN CNAME nothere.example.com.",
		"tosub.example.com. 60 IN CNAME www.sub.example.com.",
		"todel.example.com. 60 IN CNAME x.del.example.com.",
	},
	"d": {
		"del.example.com. 60 IN NS ns.del.example.com.",
		"ns.del.example.com. 60 IN A 192.0.2.99",
		"www.sub.example.com. 60 IN A 192.0.2.3",
		"*.example.org. 60 IN CNAME www.example.com.",
	},
}

// fuzzNext stands for the next plugin: it writes REFUSED with a marker.
type fuzzNext struct{}

func (fuzzNext) Name() string { return "fuzznext" }
func (fuzzNext) ServeDNS(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	m := new(dns.Msg)
	m.SetRcode(r, dns.RcodeRefused)
	w.WriteMsg(m)
	return dns.RcodeRefused, nil
}

func FuzzServeDNS(f *testing.F) {
	g, _ := qtGateway(f, []string{"example.com.", "sub.example.com.", "example.org."}, func(g *Gateway) {
		g.secondary = "ns2.example.net."
	}, fuzzObjects)
	g.Next = fuzzNext{}

	seed := func(name string, qtype uint16, edit func(*dns.Msg)) {
		m := new(dns.Msg).SetQuestion(name, qtype)
		if edit != nil {
			edit(m)
		}
		buf, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(buf)
	}
	seed("www.example.com.", dns.TypeA, nil)
	seed("WwW.ExAmPlE.CoM.", dns.TypeAAAA, nil)
	seed("example.com.", dns.TypeNS, nil)
	seed("example.com.", dns.TypeSOA, nil)
	seed("example.com.", dns.TypeANY, nil)
	seed("x.y.w.example.com.", dns.TypeA, nil)
	seed("b.w.example.com.", dns.TypeA, nil)
	seed("q.wc.example.com.", dns.TypeAAAA, nil)
	seed("q.wl.example.com.", dns.TypeA, nil)
	seed("q.e.example.com.", dns.TypeA, nil)
	seed("c1.example.com.", dns.TypeMX, nil)
	seed("loop1.example.com.", dns.TypeA, nil)
	seed("dangling.example.com.", dns.TypeA, nil)
	seed("b.c.example.com.", dns.TypeTXT, nil)
	seed("x.del.example.com.", dns.TypeA, nil)
	seed("del.example.com.", dns.TypeDS, nil)
	seed("todel.example.com.", dns.TypeA, nil)
	seed("mail.example.com.", dns.TypeMX, nil)
	seed("_http._tcp.example.com.", dns.TypeSRV, nil)
	seed("nothere.sub.example.com.", dns.TypeA, nil)
	seed("anything.example.org.", dns.TypeA, nil)
	seed("www.example.net.", dns.TypeA, nil)
	seed("example.com.", dns.TypeAXFR, nil)
	seed("www.example.com.", dns.TypeA, func(m *dns.Msg) { m.Question[0].Qclass = dns.ClassCHAOS })
	seed("www.example.com.", dns.TypeA, func(m *dns.Msg) { m.Opcode = dns.OpcodeUpdate })
	seed("www.example.com.", dns.TypeA, func(m *dns.Msg) { m.SetEdns0(4096, true) })
	seed("www.example.com.", dns.TypeA, func(m *dns.Msg) { m.SetEdns0(1232, false); m.SetEdns0(4096, true) })
	seed("www.example.com.", dns.TypeA, func(m *dns.Msg) {
		m.SetEdns0(1232, false)
		m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, SourceScope: 8, Address: net.IPv4(192, 0, 2, 0)})
	})
	seed(`a\.b.example.com.`, dns.TypeA, nil)
	seed(`\000.example.com.`, dns.TypeA, nil)

	f.Fuzz(func(t *testing.T, data []byte) {
		m := new(dns.Msg)
		if err := m.Unpack(data); err != nil || len(m.Question) == 0 {
			t.Skip()
		}
		q := m.Question[0]
		lower := strings.ToLower(q.Name)
		if got, want := index.ZoneOf(g.Zones, lower), fuzzZoneOf(g.Zones, lower); got != want {
			t.Fatalf("%q: ZoneOf %d, dns.IsSubDomain says %d", q.Name, got, want)
		}
		// Only these requests may be answered FORMERR: two OPT records (RFC
		// 6891 §6.1.1) or an ECS option (RFC 7871 §6). ServeDNS may drop the
		// OPT records of the request: counted before.
		opts, subnet := fuzzOptions(m)
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		code, err := g.ServeDNS(context.Background(), rec, m)
		if err != nil {
			t.Fatalf("%q: error %v", q.Name, err)
		}
		resp := rec.Msg
		if resp == nil {
			switch code {
			case dns.RcodeServerFailure, dns.RcodeRefused, dns.RcodeNotImplemented:
			default:
				t.Fatalf("%q: code %s without a reply", q.Name, dns.RcodeToString[code])
			}
			return
		}
		if _, err := resp.Pack(); err != nil {
			t.Fatalf("%q: reply does not pack: %v\n%s", q.Name, err, resp)
		}
		if code == dns.RcodeRefused {
			return // the next plugin's reply
		}
		if code != dns.RcodeSuccess {
			t.Fatalf("%q: code %s with a reply", q.Name, dns.RcodeToString[code])
		}
		formErr := resp.Rcode == dns.RcodeFormatError
		if opts > 1 && !formErr || formErr && opts < 2 && !subnet {
			t.Fatalf("%q: rcode %s for a request with %d OPT records, ECS %v", q.Name, dns.RcodeToString[resp.Rcode], opts, subnet)
		}
		if resp.Rcode == dns.RcodeFormatError {
			return
		}
		if resp.Rcode != dns.RcodeSuccess && resp.Rcode != dns.RcodeNameError {
			t.Fatalf("%q: rcode %s", q.Name, dns.RcodeToString[resp.Rcode])
		}
		if !resp.Response || resp.Id != m.Id || len(resp.Question) != 1 || resp.Question[0] != q {
			t.Fatalf("%q: reply header or question wrong:\n%s", q.Name, resp)
		}
		// Negative answers carry the SOA of a zone, positive ones no SOA in authority.
		if len(resp.Answer) == 0 && len(resp.Ns) == 0 {
			t.Fatalf("%q: empty reply:\n%s", q.Name, resp)
		}
	})
}

// fuzzZoneOf is index.ZoneOf written with dns.IsSubDomain, which allocates.
func fuzzZoneOf(zones []string, name string) int {
	best := -1
	for i, z := range zones {
		if dns.IsSubDomain(z, name) && (best < 0 || len(z) > len(zones[best])) {
			best = i
		}
	}
	return best
}

// fuzzOptions counts the OPT records of m and tells whether the first has an
// ECS option.
func fuzzOptions(m *dns.Msg) (opts int, subnet bool) {
	for _, rr := range m.Extra {
		o, ok := rr.(*dns.OPT)
		if !ok {
			continue
		}
		if opts++; opts == 1 {
			for _, e := range o.Option {
				subnet = subnet || e.Option() == dns.EDNS0SUBNET
			}
		}
	}
	return opts, subnet
}
