package gateway

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

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
					if ixfr, err = xtCollect(g, "example.com.", lastSerial); err == nil && testutil.IncrementalIXFR(ixfr) {
						if ixfr, err = testutil.ApplyIXFR(rrs, ixfr); err == nil {
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
	// Once the writers are done and the last change has its serial (a
	// second later at most: until then transfers serve the content first
	// served under the serial before), the transfer is exactly the index.
	deadline := time.Now().Add(3 * time.Second)
	for {
		s := g.index.Snapshot()
		body := xtCheckFrame(t, g, "example.com.", xtTransfer(t, g, "example.com.", 0), s.SOA(0)[0])
		got := xtStrings(body)
		slices.Sort(got)
		want := xtIndexRecords(s, 0)
		if slices.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("final transfer differs from the index:\n%q\n%q", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
