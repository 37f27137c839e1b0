package xfr

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// testSOA and testNS are the SOA and NS records of the tests' zones.
func testSOA(zone string, serial uint32) *dns.SOA {
	return &dns.SOA{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60},
		Ns: "ns." + zone, Mbox: "hostmaster." + zone, Serial: serial, Refresh: 300, Retry: 60, Expire: 604800, Minttl: 60}
}

func testNS(zone string) []dns.RR {
	return []dns.RR{&dns.NS{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 60}, Ns: "ns." + zone}}
}

// testZone returns an index of example.com. with 20 names, published, on a
// clock the test moves, and a function that sets the clock to the index's
// first serial + sec.
func testZone(t *testing.T) (*index.Index, func(sec int64)) {
	t.Helper()
	clk := &testutil.Clock{}
	clk.Set(time.Now().Truncate(time.Second))
	ix := index.New(index.Config{Zones: []string{"example.com."}, SOA: testSOA, NS: testNS, Now: clk.Now})
	t.Cleanup(ix.Close)
	s0 := int64(ix.Snapshot().Serial(0))
	at := func(sec int64) { clk.Set(time.Unix(s0+sec, 0)) }
	at(10)
	for i := range 20 {
		ix.Update(fmt.Sprintf("Service/ns/s%d", i), testutil.RRs(fmt.Sprintf("s%d.example.com. 60 IN A 192.0.2.%d", i, i+1)))
	}
	ix.Flush()
	return ix, at
}

// transferred runs h.Transfer of zone 0 of ix and returns every record sent,
// in order.
func transferred(t testing.TB, h *Histories, ix *index.Index, serial uint32) []dns.RR {
	t.Helper()
	zone := ix.Snapshot().Zones()[0]
	ch, err := h.Transfer(zone, 0, serial, ix.Snapshot)
	if err != nil {
		t.Fatalf("Transfer(%s, %d): %v", zone, serial, err)
	}
	return collect(t, ch)
}

// collect returns every record of a transfer's channel, in order.
func collect(t testing.TB, ch <-chan []dns.RR) []dns.RR {
	t.Helper()
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
			t.Fatal("transfer: channel not closed after 10s")
		}
	}
}

// wholeSorted returns the full transfer of ix in the form testutil.ApplyIXFR
// returns: the SOA, the records ordered by presentation form, the SOA.
func wholeSorted(t *testing.T, h *Histories, ix *index.Index) []dns.RR {
	t.Helper()
	rrs := transferred(t, h, ix, 0)
	body := rrs[1 : len(rrs)-1]
	slices.SortFunc(body, func(a, b dns.RR) int { return strings.Compare(a.String(), b.String()) })
	return rrs
}

// inOrder returns the presentation form of each record, in order.
func inOrder(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = rr.String()
	}
	return out
}
