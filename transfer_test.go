package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/transfer"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// Tests of zone transfers (transfer.go): the Transferer contract, serials, and
// AXFR, IXFR and NOTIFY on the wire through CoreDNS's transfer plugin.
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

func TestTransferAXFR(t *testing.T) {
	g := xtGateway(t, xtZones, xtZone)
	s := g.index.Snapshot()
	for zi, zone := range g.Zones {
		rrs := xtTransfer(t, g, zone, 0)
		body := xtCheckFrame(t, g, zone, rrs, s.SOA(zi)[0])
		got := xtStrings(body)
		slices.Sort(got)
		// Record by record what the index holds for the zone.
		if want := xtIndexRecords(s, zi); !slices.Equal(got, want) {
			t.Errorf("%s: transfer\n %s\nindex\n %s", zone, strings.Join(got, "\n "), strings.Join(want, "\n "))
		}
		if zone != "example.com." {
			continue
		}
		want := slices.Clone(xtWantExampleCom)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: transfer\n %s\nwant\n %s", zone, strings.Join(got, "\n "), strings.Join(want, "\n "))
		}
		// Every RRset of the transfer is what a query for it answers.
		for _, rr := range body {
			h := rr.Header()
			if index.ZoneOf(g.Zones, h.Name) != zi {
				continue // the delegation to a nested zone, which answers for itself
			}
			answer, ns, _, res := s.Lookup(zi, h.Name, h.Rrtype)
			if cut := xtCut(body, h.Name, zone); cut != "" {
				if res != index.Delegation || len(ns) == 0 {
					t.Errorf("%s %s below the cut %s: lookup gave %v", h.Name, dns.TypeToString[h.Rrtype], cut, res)
				}
				continue
			}
			if res != index.Success || !slices.Contains(xtStrings(answer), rr.String()) {
				t.Errorf("%s %s: lookup gave %v %q, the transfer has %s", h.Name, dns.TypeToString[h.Rrtype], res, xtStrings(answer), rr)
			}
		}
	}
	// The nested zone's data is its own.
	sub := xtStrings(xtCheckFrame(t, g, "sub.example.com.", xtTransfer(t, g, "sub.example.com.", 0), s.SOA(1)[0]))
	slices.Sort(sub)
	wantSub := []string{
		"dns1.kube-system.sub.example.com.\t60\tIN\tA\t192.0.2.53",
		"lb.default.sub.example.com.\t60\tIN\tA\t192.0.2.3",
		"sub.example.com.\t300\tIN\tTXT\t\"nested zone apex\"",
		"x.y.sub.example.com.\t300\tIN\tA\t192.0.2.77",
	}
	slices.Sort(wantSub)
	if !slices.Equal(sub, wantSub) {
		t.Errorf("sub.example.com.: transfer %q, want %q", sub, wantSub)
	}
}

// TestTransferEmptyZone: a zone without data transfers as SOA, NS, SOA.
func TestTransferEmptyZone(t *testing.T) {
	g := xtGateway(t, []string{"example.com."}, nil)
	rrs := xtTransfer(t, g, "example.com.", 0)
	soa := g.index.Snapshot().SOA(0)[0]
	if body := xtCheckFrame(t, g, "example.com.", rrs, soa); len(body) != 0 {
		t.Errorf("empty zone transfers %q", xtStrings(body))
	}
	if len(rrs) != 3 {
		t.Errorf("got %d records, want SOA NS SOA", len(rrs))
	}
}

// TestTransferLargeZone: batches of the channel keep every record once.
func TestTransferLargeZone(t *testing.T) {
	objects := map[string][]string{}
	for i := range 2000 {
		objects[fmt.Sprintf("Service/ns/s%d", i)] = []string{fmt.Sprintf("s%d.example.com. 60 IN A 10.%d.%d.1", i, i/256, i%256)}
	}
	g := xtGateway(t, []string{"example.com."}, objects)
	s := g.index.Snapshot()
	body := xtCheckFrame(t, g, "example.com.", xtTransfer(t, g, "example.com.", 0), s.SOA(0)[0])
	if len(body) != 2000 {
		t.Errorf("got %d records, want 2000", len(body))
	}
}

func TestTransferIXFR(t *testing.T) {
	g := xtGateway(t, xtZones, xtZone)
	s := g.index.Snapshot()
	serial := s.Serial(0)
	soa := s.SOA(0)[0]
	full := xtStrings(xtTransfer(t, g, "example.com.", 0))
	for _, tc := range []struct {
		name   string
		serial uint32
		full   bool
	}{
		{"current", serial, false},
		{"newer", serial + 1, false},
		{"much newer", serial + 1<<31 - 1, false},
		{"older", serial - 1, true},
		{"much older", serial - 1<<31 + 1, true},
		// Serial arithmetic (RFC 1982): 2^31+1 ahead is behind.
		{"wrapped", serial + 1<<31 + 1, true},
	} {
		got := xtTransfer(t, g, "example.com.", tc.serial)
		if tc.full {
			if !slices.Equal(xtStrings(got), full) {
				t.Errorf("%s (%d): not the full zone:\n%s", tc.name, tc.serial, strings.Join(xtStrings(got), "\n"))
			}
			continue
		}
		if len(got) != 1 || got[0].String() != soa.String() {
			t.Errorf("%s (%d): got %q, want the single SOA %s", tc.name, tc.serial, xtStrings(got), soa)
		}
	}
}

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

// TestTransferConsistentSnapshot: writers change records while transfers run.
// Each object publishes a pair of records carrying the same generation, so a
// transfer from one snapshot shows both records of a pair with the same
// generation, or neither. Run with -race.
func TestTransferConsistentSnapshot(t *testing.T) {
	const pairs, writers, readers = 40, 4, 4
	g := xtGateway(t, []string{"example.com.", "example.org."}, nil)
	pair := func(i, gen int) []dns.RR {
		if gen%7 == 6 {
			return nil // deleted now and then: both records go at once
		}
		return xtRRs(
			fmt.Sprintf("a%d.example.com. 60 IN A 10.0.%d.%d", i, gen/256%256, gen%256),
			fmt.Sprintf("b%d.x.example.com. 60 IN TXT \"gen=%d\"", i, gen),
			fmt.Sprintf("c%d.example.org. 60 IN TXT \"gen=%d\"", i, gen),
		)
	}
	stop := make(chan struct{})
	var updates, transfers, ixfrs atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for gen := 1; ; gen++ {
				select {
				case <-stop:
					return
				default:
				}
				for i := w; i < pairs; i += writers {
					g.index.Update(fmt.Sprintf("Pair/ns/p%d", i), pair(i, gen))
					updates.Add(1)
				}
			}
		}()
	}
	errs := make(chan error, readers)
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lastSerial uint32
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				rrs, err := xtCollect(g, "example.com.", 0)
				if err == nil {
					err = xtCheckPairs(rrs, &lastSerial)
				}
				if err == nil {
					// An IXFR from the serial just seen is the single SOA,
					// the differences from the zone just seen, or the full zone.
					var ixfr []dns.RR
					if ixfr, err = xtCollect(g, "example.com.", lastSerial); err == nil && xtIncremental(ixfr) {
						if ixfr, err = xtApplyIXFR(rrs, ixfr); err == nil {
							err = xtCheckPairs(ixfr, &lastSerial)
						}
					} else if err == nil && len(ixfr) > 1 {
						err = xtCheckPairs(ixfr, &lastSerial)
					} else if err == nil && (len(ixfr) != 1 || index.SerialLess(ixfr[0].(*dns.SOA).Serial, lastSerial)) {
						err = fmt.Errorf("IXFR from %d: %q", lastSerial, xtStrings(ixfr))
					}
					ixfrs.Add(1)
				}
				if err != nil {
					errs <- err
					return
				}
				transfers.Add(1)
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if updates.Load() < 100 || transfers.Load() < 10 {
		t.Errorf("too little happened: %d updates, %d transfers", updates.Load(), transfers.Load())
	}
	t.Logf("%d updates, %d transfers, %d IXFRs", updates.Load(), transfers.Load(), ixfrs.Load())
	// Once the writers are done, the transfer is exactly the index.
	s := g.index.Snapshot()
	body := xtCheckFrame(t, g, "example.com.", xtTransfer(t, g, "example.com.", 0), s.SOA(0)[0])
	got := xtStrings(body)
	slices.Sort(got)
	if want := xtIndexRecords(s, 0); !slices.Equal(got, want) {
		t.Errorf("final transfer differs from the index:\n%q\n%q", got, want)
	}
}

// xtIncremental reports whether a transfer is an incremental IXFR: a second
// SOA right after the first (RFC 1995 §4).
func xtIncremental(rrs []dns.RR) bool {
	if len(rrs) < 3 {
		return false
	}
	_, ok := rrs[1].(*dns.SOA)
	return ok
}

// xtApplyIXFR applies the incremental IXFR ixfr to the full transfer base and
// returns the full transfer it leads to (the new SOA, the records, the new
// SOA). It fails unless ixfr starts from base's serial, deletes only records
// base has and adds only records it lacks (RFC 1995 §4).
func xtApplyIXFR(base, ixfr []dns.RR) ([]dns.RR, error) {
	if !xtIncremental(ixfr) || len(base) < 2 {
		return nil, fmt.Errorf("not an incremental IXFR: %q", xtStrings(ixfr))
	}
	newSOA, fromSOA := ixfr[0].(*dns.SOA), ixfr[1].(*dns.SOA)
	if last, ok := ixfr[len(ixfr)-1].(*dns.SOA); !ok || last.Serial != newSOA.Serial {
		return nil, fmt.Errorf("IXFR not ended by its SOA: %q", xtStrings(ixfr))
	}
	if fromSOA.Serial != base[0].(*dns.SOA).Serial {
		return nil, fmt.Errorf("IXFR from serial %d applied to serial %d", fromSOA.Serial, base[0].(*dns.SOA).Serial)
	}
	have := map[string]dns.RR{}
	for _, rr := range base[1 : len(base)-1] {
		have[rr.String()] = rr
	}
	adding := false
	for _, rr := range ixfr[2 : len(ixfr)-1] {
		if soa, ok := rr.(*dns.SOA); ok {
			if adding || soa.Serial != newSOA.Serial {
				return nil, fmt.Errorf("unexpected SOA in the IXFR: %s", rr)
			}
			adding = true
			continue
		}
		k := rr.String()
		_, ok := have[k]
		switch {
		case !adding && !ok:
			return nil, fmt.Errorf("IXFR deletes %s, which the zone lacks", rr)
		case adding && ok:
			return nil, fmt.Errorf("IXFR adds %s, which the zone has", rr)
		case adding:
			have[k] = rr
		default:
			delete(have, k)
		}
	}
	if !adding {
		return nil, fmt.Errorf("IXFR without its additions: %q", xtStrings(ixfr))
	}
	keys := make([]string, 0, len(have))
	for k := range have {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := []dns.RR{newSOA}
	for _, k := range keys {
		out = append(out, have[k])
	}
	return append(out, newSOA), nil
}

// xtCollect is xtTransfer for goroutines: it returns an error instead of failing.
func xtCollect(g *Gateway, zone string, serial uint32) ([]dns.RR, error) {
	ch, err := g.Transfer(zone, serial)
	if err != nil {
		return nil, err
	}
	var out []dns.RR
	for rrs := range ch {
		out = append(out, rrs...)
	}
	return out, nil
}

// xtCheckPairs checks one transfer of TestTransferConsistentSnapshot: the SOA
// first and last with one serial, not older than the one seen before, and the
// records of each pair together with one generation.
func xtCheckPairs(rrs []dns.RR, lastSerial *uint32) error {
	if len(rrs) < 3 {
		return fmt.Errorf("short transfer %q", xtStrings(rrs))
	}
	first, ok1 := rrs[0].(*dns.SOA)
	last, ok2 := rrs[len(rrs)-1].(*dns.SOA)
	if !ok1 || !ok2 || first.Serial != last.Serial {
		return fmt.Errorf("transfer framed by %s and %s", rrs[0], rrs[len(rrs)-1])
	}
	if index.SerialLess(first.Serial, *lastSerial) {
		return fmt.Errorf("serial went back from %d to %d", *lastSerial, first.Serial)
	}
	*lastSerial = first.Serial
	a, b := map[string]string{}, map[string]string{}
	for _, rr := range rrs[1 : len(rrs)-1] {
		name := rr.Header().Name
		switch x := rr.(type) {
		case *dns.A:
			ip := x.A.To4()
			a[strings.TrimPrefix(strings.Split(name, ".")[0], "a")] = fmt.Sprint(int(ip[2])*256 + int(ip[3]))
		case *dns.TXT:
			if _, dup := b[strings.TrimPrefix(strings.Split(name, ".")[0], "b")]; dup {
				return fmt.Errorf("duplicate %s", rr)
			}
			b[strings.TrimPrefix(strings.Split(name, ".")[0], "b")] = strings.TrimPrefix(x.Txt[0], "gen=")
		case *dns.SOA:
			return fmt.Errorf("SOA inside the transfer: %s", rr)
		case *dns.NS:
		default:
			return fmt.Errorf("unexpected record %s", rr)
		}
	}
	if len(a) != len(b) {
		return fmt.Errorf("torn transfer: %d A records, %d TXT records", len(a), len(b))
	}
	for i, gen := range a {
		if b[i] != gen {
			return fmt.Errorf("torn transfer: pair %s has generation %s in A and %q in TXT", i, gen, b[i])
		}
	}
	return nil
}

// xtListener passes what the index reports to an index listener, and tells
// serial of the new serials too.
type xtListener struct {
	index.Listener
	serial func(zone string, serial uint32)
}

func (l xtListener) SerialChanged(zone string, serial uint32) {
	l.serial(zone, serial)
	l.Listener.SerialChanged(zone, serial)
}

// xtClock is a settable clock for the index.
type xtClock struct{ ns atomic.Int64 }

func (c *xtClock) now() time.Time  { return time.Unix(0, c.ns.Load()) }
func (c *xtClock) set(t time.Time) { c.ns.Store(t.UnixNano()) }

// TestTransferSerial: the serial moves forward with every change of the
// zone's data, and only then; the SOA of transfers and queries follows it.
func TestTransferSerial(t *testing.T) {
	clk := &xtClock{}
	clk.set(time.Now().Truncate(time.Second))
	g := newGateway()
	g.Zones = []string{"example.com.", "example.org."}
	var mu sync.Mutex
	var announced []string
	g.index = index.New(index.Config{
		Zones: g.Zones, SOA: g.newSOA, NS: g.nsRecords, Now: clk.now,
		Listener: xtListener{indexListener{g}, func(zone string, serial uint32) {
			mu.Lock()
			announced = append(announced, fmt.Sprintf("%s %d", zone, serial))
			mu.Unlock()
		}},
	})
	t.Cleanup(g.index.Close)
	s0 := g.index.Snapshot().Serial(0)
	clk.set(time.Unix(int64(s0)+10, 0))
	takeAnnounced := func() []string {
		mu.Lock()
		defer mu.Unlock()
		a := announced
		announced = nil
		return a
	}
	serial := func() uint32 {
		t.Helper()
		s := g.index.Snapshot()
		rrs := xtTransfer(t, g, "example.com.", 0)
		if got := rrs[0].(*dns.SOA).Serial; got != s.Serial(0) {
			t.Fatalf("transfer SOA serial %d, zone serial %d", got, s.Serial(0))
		}
		answer, _, _, _ := s.Lookup(0, "example.com.", dns.TypeSOA)
		if got := answer[0].(*dns.SOA).Serial; got != s.Serial(0) {
			t.Fatalf("SOA query serial %d, zone serial %d", got, s.Serial(0))
		}
		return s.Serial(0)
	}
	expect := func(step string, want uint32, wantAnnounced ...string) {
		t.Helper()
		if got := serial(); got != want {
			t.Errorf("%s: serial %d, want %d", step, got, want)
		}
		if got := takeAnnounced(); !slices.Equal(got, wantAnnounced) {
			t.Errorf("%s: announced %q, want %q", step, got, wantAnnounced)
		}
	}

	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.1"))
	g.index.Flush()
	g.ready.Store(true)
	expect("initial sync", s0+10, fmt.Sprintf("example.com. %d", s0+10), fmt.Sprintf("example.org. %d", s0+10))

	clk.set(time.Unix(int64(s0)+20, 0))
	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.1"))
	expect("identical update", s0+10)
	g.index.Update("Ingress/b/www", xtRRs("www.example.com. 60 IN A 192.0.2.1"))
	expect("the same record from a second object", s0+10)
	g.index.Update("Ingress/c/out", xtRRs("www.example.net. 60 IN A 192.0.2.9"))
	expect("a record outside the zones", s0+10)
	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.2", "www.example.com. 60 IN A 192.0.2.1"))
	expect("a record added", s0+20, fmt.Sprintf("example.com. %d", s0+20))
	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.1", "www.example.com. 60 IN A 192.0.2.2"))
	expect("the same records in another order", s0+20)

	// A change in the same second is served at once; its serial follows on
	// the next second (the index's timer), with one announcement.
	old := serial()
	g.index.Update("Ingress/d/new", xtRRs("new.example.com. 60 IN A 192.0.2.3"))
	if _, _, _, res := g.index.Snapshot().Lookup(0, "new.example.com.", dns.TypeA); res != index.Success {
		t.Errorf("change in the same second not served at once: %v", res)
	}
	deadline := time.Now().Add(3 * time.Second)
	for g.index.Snapshot().Serial(0) == old && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	expect("a change in the same second", s0+21, fmt.Sprintf("example.com. %d", s0+21))
	// The old serial gets the whole zone, the new one only the SOA.
	if rrs := xtTransfer(t, g, "example.com.", old); len(rrs) < 3 || !slices.ContainsFunc(rrs, func(rr dns.RR) bool { return rr.Header().Name == "new.example.com." }) {
		t.Errorf("IXFR from %d: %q", old, xtStrings(rrs))
	}
	if rrs := xtTransfer(t, g, "example.com.", s0+21); len(rrs) != 1 {
		t.Errorf("IXFR from %d: %q", s0+21, xtStrings(rrs))
	}

	// Another zone's change leaves example.com's serial alone.
	clk.set(time.Unix(int64(s0)+30, 0))
	g.index.Update("Ingress/e/org", xtRRs("www.example.org. 60 IN A 192.0.2.4"))
	expect("a change in another zone", s0+21, fmt.Sprintf("example.org. %d", s0+30))
	g.index.Update("Ingress/d/new", nil)
	expect("a deletion", s0+30, fmt.Sprintf("example.com. %d", s0+30))
	g.index.Update("Ingress/d/new", nil)
	expect("deleting what is gone", s0+30)
}

// xtTransferPlugin returns CoreDNS's transfer plugin set up from block (a
// Corefile directive with its zones as arguments) in front of g, as a server
// block with both would have it.
func xtTransferPlugin(t *testing.T, g *Gateway, block string) *transfer.Transfer {
	t.Helper()
	setup, err := caddy.DirectiveAction("dns", "transfer")
	if err != nil {
		t.Fatal(err)
	}
	c := caddy.NewTestController("dns", block)
	if err := setup(c); err != nil {
		t.Fatalf("transfer setup: %v", err)
	}
	cfg := dnsserver.GetConfig(c)
	tr := cfg.Plugin[len(cfg.Plugin)-1](g).(*transfer.Transfer)
	tr.Transferers = []transfer.Transferer{g}
	return tr
}

// xtServer serves h on 127.0.0.1 over UDP and TCP on one port and returns the address.
func xtServer(t *testing.T, h plugin.Handler) string {
	t.Helper()
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		// As CoreDNS's server does: a plugin that wrote nothing gets its rcode sent.
		rc, _ := h.ServeDNS(context.Background(), w, r)
		if !plugin.ClientWrite(rc) {
			m := new(dns.Msg)
			m.SetRcode(r, rc)
			w.WriteMsg(m)
		}
	})
	var pc net.PacketConn
	var l net.Listener
	for range 20 {
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if l, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
		pc = nil
	}
	if pc == nil {
		t.Fatal("no free port")
	}
	udp := &dns.Server{PacketConn: pc, Handler: handler}
	tcp := &dns.Server{Listener: l, Handler: handler}
	go udp.ActivateAndServe()
	go tcp.ActivateAndServe()
	t.Cleanup(func() { udp.Shutdown(); tcp.Shutdown() })
	return pc.LocalAddr().String()
}

// xtAXFR transfers zone from addr over TCP with dns.Transfer.
func xtAXFR(addr, zone string, ixfrSerial uint32) ([]dns.RR, error) {
	m := new(dns.Msg)
	if ixfrSerial != 0 {
		m.SetIxfr(zone, ixfrSerial, "ns.", "hostmaster.")
	} else {
		m.SetAxfr(zone)
	}
	tr := &dns.Transfer{DialTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second}
	env, err := tr.In(m, addr)
	if err != nil {
		return nil, err
	}
	var out []dns.RR
	for e := range env {
		if e.Error != nil {
			return out, e.Error
		}
		out = append(out, e.RR...)
	}
	return out, nil
}

// TestTransferWire: AXFR and IXFR through CoreDNS's transfer plugin on a real
// TCP connection, and the plugin's refusals.
func TestTransferWire(t *testing.T) {
	g := xtGateway(t, xtZones, xtZone)
	addr := xtServer(t, xtTransferPlugin(t, g, "transfer example.com example.org {\n to *\n}"))
	s := g.index.Snapshot()

	got, err := xtAXFR(addr, "example.com.", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := xtStrings(xtTransfer(t, g, "example.com.", 0)); !slices.Equal(xtStrings(got), want) {
		t.Errorf("AXFR on the wire:\n%s\nwant\n%s", strings.Join(xtStrings(got), "\n"), strings.Join(want, "\n"))
	}
	got, err = xtAXFR(addr, "example.com.", s.Serial(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].String() != s.SOA(0)[0].String() {
		t.Errorf("IXFR from the current serial: %q", xtStrings(got))
	}
	got, err = xtAXFR(addr, "example.com.", s.Serial(0)-100)
	if err != nil {
		t.Fatal(err)
	}
	if want := xtStrings(xtTransfer(t, g, "example.com.", 0)); !slices.Equal(xtStrings(got), want) {
		t.Errorf("IXFR from an old serial (AXFR-style, RFC 1995 §4):\n%s", strings.Join(xtStrings(got), "\n"))
	}

	rcode := func(net string, m *dns.Msg, addr string) string {
		t.Helper()
		c := &dns.Client{Net: net, Timeout: 2 * time.Second}
		r, _, err := c.Exchange(m, addr)
		if err != nil {
			t.Fatalf("%s %s: %v", net, m.Question[0].String(), err)
		}
		return dns.RcodeToString[r.Rcode]
	}
	axfr := func(zone string) *dns.Msg { m := new(dns.Msg); m.SetAxfr(zone); return m }
	// The transfer plugin's zones match by suffix: the nested zone
	// sub.example.com. is transferred under `transfer example.com`, from
	// its own data.
	got, err = xtAXFR(addr, "sub.example.com.", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := xtStrings(xtTransfer(t, g, "sub.example.com.", 0)); !slices.Equal(xtStrings(got), want) {
		t.Errorf("AXFR of the nested zone:\n%s", strings.Join(xtStrings(got), "\n"))
	}
	// AXFR over UDP, and of a name that is not a zone (k8s_gateway answers
	// that one itself, after ErrNotAuthoritative): REFUSED.
	if rc := rcode("udp", axfr("example.com."), addr); rc != "REFUSED" {
		t.Errorf("AXFR over UDP: %s", rc)
	}
	if rc := rcode("tcp", axfr("www.example.com."), addr); rc != "REFUSED" {
		t.Errorf("AXFR of a name that is not a zone: %s", rc)
	}

	// The transfer plugin allows only the addresses of `to`.
	g2 := xtGateway(t, xtZones, xtZone)
	addr2 := xtServer(t, xtTransferPlugin(t, g2, "transfer example.com {\n to 127.0.0.2\n}"))
	if rc := rcode("tcp", axfr("example.com."), addr2); rc != "REFUSED" {
		t.Errorf("AXFR from an address not in `to`: %s", rc)
	}
	// Not synced: SERVFAIL.
	g.ready.Store(false)
	if rc := rcode("tcp", axfr("example.com."), addr); rc != "SERVFAIL" {
		t.Errorf("AXFR before sync: %s", rc)
	}
}

// TestTransferNotify: every serial change sends one NOTIFY to the
// secondaries the transfer plugin names, for the zone that changed; an update
// that changes nothing sends none.
func TestTransferNotify(t *testing.T) {
	notifies := make(chan string, 100)
	secondary := xtServer(t, plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		if r.Opcode == dns.OpcodeNotify && len(r.Question) == 1 {
			notifies <- r.Question[0].Name + " " + dns.TypeToString[r.Question[0].Qtype]
		}
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		w.WriteMsg(m)
		return dns.RcodeSuccess, nil
	}))
	// On a clock ten seconds after the initial serial, the first Flush
	// announces every zone at once, before NOTIFY is watched.
	clk := &xtClock{}
	clk.set(time.Now().Truncate(time.Second))
	g := newGateway()
	g.Zones = []string{"example.com.", "example.org."}
	g.now = clk.now
	g.buildIndex()
	t.Cleanup(g.index.Close)
	clk.set(clk.now().Add(10 * time.Second))
	g.index.Flush()
	g.ready.Store(true)
	if g.index.Pending() {
		t.Fatal("a serial is pending after the first Flush")
	}
	g.xfer.Store(xtTransferPlugin(t, g, "transfer example.com example.org {\n to "+secondary+"\n}"))

	expect := func(step string, want ...string) {
		t.Helper()
		var got []string
		timeout := time.After(2 * time.Second)
		for len(got) < len(want) {
			select {
			case n := <-notifies:
				got = append(got, n)
			case <-timeout:
				t.Fatalf("%s: NOTIFY %q after 2s, want %q", step, got, want)
			}
		}
		select {
		case n := <-notifies:
			got = append(got, n)
		case <-time.After(300 * time.Millisecond):
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: NOTIFY %q, want %q", step, got, want)
		}
	}
	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.1"))
	expect("a change of example.com", "example.com. SOA")
	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.1"))
	expect("no change")
	clk.set(clk.now().Add(time.Second))
	g.index.Update("Ingress/a/www", xtRRs("www.example.com. 60 IN A 192.0.2.1", "www.example.org. 60 IN A 192.0.2.1"))
	expect("a change of example.org", "example.org. SOA")
	clk.set(clk.now().Add(time.Second))
	g.index.Update("Ingress/a/www", nil)
	expect("a change of both", "example.com. SOA", "example.org. SOA")
}
