package gateway

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// Tests of zone transfers (transfer.go): the Transferer contract, serials, and
// AXFR, IXFR and NOTIFY on the wire through CoreDNS's transfer plugin, one
// file per behaviour (AXFR, IXFR, serials, the wire, NOTIFY).
// Helpers are prefixed "xt" to stay out of the way of other test files.

// xtRRs parses records in presentation format; it panics on a typo.
func xtRRs(ss ...string) []dns.RR {
	out := make([]dns.RR, len(ss))
	for i, s := range ss {
		rr, err := dns.NewRR(s)
		if err != nil || rr == nil {
			panic(fmt.Sprintf("bad test record %q: %v", s, err))
		}
		out[i] = rr
	}
	return out
}

// xtGateway returns a ready Gateway for zones with objects (key → records)
// applied, without Kubernetes, on the real clock.
func xtGateway(t testing.TB, zones []string, objects map[string][]string) *Gateway {
	t.Helper()
	g := newGateway()
	g.Zones = zones
	// A clock a second past the index's start: the first Flush publishes
	// its serial at once, and no timer can bump it while a test reads it.
	clk := &testutil.Clock{}
	clk.Set(time.Now().Truncate(time.Second))
	g.now = clk.Now
	g.buildIndex()
	clk.Add(time.Second)
	t.Cleanup(g.index.Close)
	keys := make([]string, 0, len(objects))
	for k := range objects {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		g.index.Update(k, xtRRs(objects[k]...))
	}
	g.index.Flush()
	g.ready.Store(true)
	return g
}

// xtTransfer runs g.Transfer and returns every record it sends, in order.
func xtTransfer(t testing.TB, g *Gateway, zone string, serial uint32) []dns.RR {
	t.Helper()
	ch, err := g.Transfer(zone, serial)
	if err != nil {
		t.Fatalf("Transfer(%s, %d): %v", zone, serial, err)
	}
	var out []dns.RR
	timeout := time.After(10 * time.Second)
	for {
		select {
		case rrs, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, rrs...)
		case <-timeout:
			t.Fatalf("Transfer(%s, %d): channel not closed after 10s", zone, serial)
		}
	}
}

// xtStrings returns the presentation form of each record, in order.
func xtStrings(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = rr.String()
	}
	return out
}

// xtCheckFrame checks the AXFR framing of rrs (RFC 5936 §2.2): the zone's SOA
// first and last, the apex NS RRset right after it, no other SOA and no
// duplicate record; it returns the records between the NS RRset and the last
// SOA.
func xtCheckFrame(t *testing.T, g *Gateway, zone string, rrs []dns.RR, wantSOA dns.RR) []dns.RR {
	t.Helper()
	zi := slices.Index(g.Zones, zone)
	ns := g.index.Snapshot().NS(zi)
	if len(rrs) < 2+len(ns) {
		t.Fatalf("%s: transfer too short:\n%s", zone, strings.Join(xtStrings(rrs), "\n"))
	}
	first, last := rrs[0], rrs[len(rrs)-1]
	if first.String() != wantSOA.String() || last.String() != wantSOA.String() {
		t.Errorf("%s: first %q and last %q, want the SOA %q", zone, first, last, wantSOA)
	}
	if got, want := xtStrings(rrs[1:1+len(ns)]), xtStrings(ns); !slices.Equal(got, want) {
		t.Errorf("%s: apex NS %q, want %q", zone, got, want)
	}
	body := rrs[1+len(ns) : len(rrs)-1]
	seen := map[string]bool{}
	for _, rr := range body {
		if rr.Header().Rrtype == dns.TypeSOA {
			t.Errorf("%s: SOA inside the transfer: %s", zone, rr)
		}
		if rr.Header().Name == zone && rr.Header().Rrtype == dns.TypeNS {
			t.Errorf("%s: second apex NS RRset: %s", zone, rr)
		}
		if zj := index.ZoneOf(g.Zones, rr.Header().Name); zj != zi && !xtDelegation(g, zi, zj, rr) {
			t.Errorf("%s: record of another zone: %s", zone, rr)
		}
		if seen[rr.String()] {
			t.Errorf("%s: duplicate record %s", zone, rr)
		}
		seen[rr.String()] = true
	}
	return body
}

// xtDelegation reports whether rr, of zone zj, belongs in the transfer of zi
// as part of a delegation: the NS RRset at the apex of a zone nested in zi,
// or glue for a name below that apex.
func xtDelegation(g *Gateway, zi, zj int, rr dns.RR) bool {
	if zj < 0 || !dns.IsSubDomain(g.Zones[zi], g.Zones[zj]) {
		return false
	}
	h := rr.Header()
	return h.Name == g.Zones[zj] && h.Rrtype == dns.TypeNS || h.Rrtype == dns.TypeA || h.Rrtype == dns.TypeAAAA
}

// xtIndexRecords returns the records of zone zi in snapshot s, sorted.
func xtIndexRecords(s *index.Snapshot, zi int) []string {
	out := xtStrings(s.Records(zi))
	slices.Sort(out)
	return out
}

// xtCut returns the name at or above name (below the apex) that has NS
// records in body, or "".
func xtCut(body []dns.RR, name, zone string) string {
	for _, rr := range body {
		h := rr.Header()
		if h.Rrtype == dns.TypeNS && h.Name != zone && dns.IsSubDomain(h.Name, name) {
			return h.Name
		}
	}
	return ""
}

// xtZone is a small zone with every kind of data the plugin publishes, a
// nested zone, another zone and names outside every zone.
var xtZone = map[string][]string{
	// The nameserver's own Service: the glue of the apex NS, in every zone.
	"Service/kube-system/dns1": {
		"dns1.kube-system.example.com. 60 IN A 192.0.2.53",
		"dns1.kube-system.example.com. 60 IN AAAA 2001:db8::53",
		"dns1.kube-system.sub.example.com. 60 IN A 192.0.2.53",
		"dns1.kube-system.example.org. 60 IN A 192.0.2.53",
	},
	// Two objects publish www: the RRsets are united with the smallest TTL.
	"Ingress/default/web": {
		"www.example.com. 60 IN A 192.0.2.1",
		"www.example.com. 60 IN A 192.0.2.2",
	},
	"Ingress/default/web2": {
		"www.example.com. 30 IN A 192.0.2.2",
		"www.example.com. 30 IN AAAA 2001:db8::2",
	},
	"Service/default/lb": {
		"lb.default.example.com. 60 IN A 192.0.2.3",
		"_https._tcp.lb.default.example.com. 60 IN SRV 0 100 443 lb.default.example.com.",
		"lb.default.sub.example.com. 60 IN A 192.0.2.3",
		"lb.default.example.org. 60 IN A 192.0.2.3",
	},
	"Ingress/default/apps": {
		"*.apps.example.com. 60 IN A 192.0.2.10",
		"*.apps.example.com. 60 IN AAAA 2001:db8::10",
	},
	"Service/default/alias": {
		"alias.example.com. 60 IN CNAME www.example.com.",
		"elb.example.com. 60 IN CNAME lb-1234.elb.amazonaws.com.",
		"*.cdn.example.com. 60 IN CNAME cdn.example.net.",
	},
	"DNSEndpoint/default/mail": {
		"example.com. 300 IN TXT \"v=spf1 -all\"",
		"example.com. 300 IN MX 10 mx.example.com.",
		"mx.example.com. 300 IN A 192.0.2.25",
		"example.com. 300 IN CAA 0 issue \"letsencrypt.org\"",
		// A delegation with its glue.
		"team.example.com. 300 IN NS ns1.team.example.com.",
		"ns1.team.example.com. 300 IN A 192.0.2.99",
		// Outside every zone: ignored.
		"www.example.net. 300 IN A 192.0.2.200",
	},
	"DNSEndpoint/default/nested": {
		"sub.example.com. 300 IN TXT \"nested zone apex\"",
		"x.y.sub.example.com. 300 IN A 192.0.2.77",
	},
}

// xtWantExampleCom is the data of example.com. in xtZone, apex SOA and NS
// aside: every record, wildcards and CNAMEs as they are, nothing of
// sub.example.com. or example.org.
var xtWantExampleCom = []string{
	"example.com.\t300\tIN\tMX\t10 mx.example.com.",
	"example.com.\t300\tIN\tTXT\t\"v=spf1 -all\"",
	"example.com.\t300\tIN\tCAA\t0 issue \"letsencrypt.org\"",
	"dns1.kube-system.example.com.\t60\tIN\tA\t192.0.2.53",
	"dns1.kube-system.example.com.\t60\tIN\tAAAA\t2001:db8::53",
	"www.example.com.\t30\tIN\tA\t192.0.2.1",
	"www.example.com.\t30\tIN\tA\t192.0.2.2",
	"www.example.com.\t30\tIN\tAAAA\t2001:db8::2",
	"lb.default.example.com.\t60\tIN\tA\t192.0.2.3",
	"_https._tcp.lb.default.example.com.\t60\tIN\tSRV\t0 100 443 lb.default.example.com.",
	"*.apps.example.com.\t60\tIN\tA\t192.0.2.10",
	"*.apps.example.com.\t60\tIN\tAAAA\t2001:db8::10",
	"alias.example.com.\t60\tIN\tCNAME\twww.example.com.",
	"elb.example.com.\t60\tIN\tCNAME\tlb-1234.elb.amazonaws.com.",
	"*.cdn.example.com.\t60\tIN\tCNAME\tcdn.example.net.",
	"mx.example.com.\t300\tIN\tA\t192.0.2.25",
	"team.example.com.\t300\tIN\tNS\tns1.team.example.com.",
	"ns1.team.example.com.\t300\tIN\tA\t192.0.2.99",
	// The nested zone sub.example.com.: its delegation, with glue.
	"sub.example.com.\t60\tIN\tNS\tdns1.kube-system.sub.example.com.",
	"dns1.kube-system.sub.example.com.\t60\tIN\tA\t192.0.2.53",
}

var xtZones = []string{"example.com.", "sub.example.com.", "example.org."}

func TestTransferRefusals(t *testing.T) {
	g := xtGateway(t, xtZones, xtZone)
	for _, zone := range []string{"example.net.", "www.example.com.", "com.", ".", "", "team.example.com."} {
		ch, err := g.Transfer(zone, 0)
		if !errors.Is(err, transfer.ErrNotAuthoritative) || ch != nil {
			t.Errorf("Transfer(%q): %v, %v; want ErrNotAuthoritative", zone, ch, err)
		}
	}
	g.ready.Store(false)
	for _, serial := range []uint32{0, g.index.Snapshot().Serial(0)} {
		ch, err := g.Transfer("example.com.", serial)
		if err == nil || errors.Is(err, transfer.ErrNotAuthoritative) || ch != nil {
			t.Errorf("Transfer before sync (serial %d): %v, %v; want an error", serial, ch, err)
		}
	}
	// Not authoritative wins over not ready: another plugin may serve the zone.
	if _, err := g.Transfer("example.net.", 0); !errors.Is(err, transfer.ErrNotAuthoritative) {
		t.Errorf("Transfer(example.net.) before sync: %v, want ErrNotAuthoritative", err)
	}
}
