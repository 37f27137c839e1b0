package delegation

import (
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestSyncerWant: the delegation of each zone is its NS RRset with the
// addresses the zone answers for the nameserver names below the cut; a
// zone whose in-zone nameserver has none yet waits; reverse zones and
// zones nested in another of the block are not the parent's to hold.
func TestSyncerWant(t *testing.T) {
	zones := []string{"example.com.", "a.example.com.", "other.org.", "0.0.10.in-addr.arpa."}
	ns := map[string][]dns.RR{
		"example.com.":         testutil.RRs("example.com. 60 IN NS ns1.example.com.", "example.com. 60 IN NS ns.example.net."),
		"a.example.com.":       testutil.RRs("a.example.com. 60 IN NS ns1.example.com."),
		"other.org.":           testutil.RRs("other.org. 60 IN NS ns1.other.org."),
		"0.0.10.in-addr.arpa.": testutil.RRs("0.0.10.in-addr.arpa. 60 IN NS ns1.example.com."),
	}
	soa := func(zone string, serial uint32) *dns.SOA {
		return &dns.SOA{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60}, Ns: "ns1." + zone, Mbox: "h." + zone, Serial: serial}
	}
	clk := &testutil.Clock{}
	clk.Set(time.Now())
	ix := index.New(index.Config{Zones: zones, SOA: soa, NS: func(z string) []dns.RR { return ns[z] }, Now: clk.Now})
	t.Cleanup(ix.Close)
	ix.Update("Service/kube-system/dns", testutil.RRs(
		"ns1.example.com. 60 IN A 192.0.2.53", "ns1.example.com. 60 IN AAAA 2001:db8::53", "ns.example.net. 60 IN A 192.0.2.99"))
	ix.Flush()
	published := false
	s := NewSyncer(Parent{Addr: "127.0.0.1:53"}, 300, zones, func(z string) []dns.RR { return ns[z] }, func() *index.Snapshot {
		if !published {
			return nil
		}
		return ix.Snapshot()
	})
	if err := s.sync(nil); err != errNotPublished {
		t.Errorf("sync before the zones are published: %v, want errNotPublished", err)
	}
	published = true

	for zi, tc := range []struct {
		delegated bool
		want      zoneCut
		missing   string
	}{
		{true, zoneCut{zone: "example.com.", nameservers: []string{"ns1.example.com.", "ns.example.net."}, ttl: 300,
			glue: map[string][]netip.Addr{"ns1.example.com.": {netip.MustParseAddr("192.0.2.53"), netip.MustParseAddr("2001:db8::53")}}}, ""},
		{false, zoneCut{}, ""},
		{true, zoneCut{zone: "other.org.", nameservers: []string{"ns1.other.org."}, ttl: 300, glue: map[string][]netip.Addr{}}, "ns1.other.org."},
		{false, zoneCut{}, ""},
	} {
		zone := zones[zi]
		if got := s.delegated(zone); got != tc.delegated {
			t.Errorf("%s: delegated by the parent %v, want %v", zone, got, tc.delegated)
		}
		if !tc.delegated {
			continue
		}
		w, missing := s.want(ix.Snapshot(), zi)
		if missing != tc.missing || !reflect.DeepEqual(w, tc.want) {
			t.Errorf("%s: want %+v, missing %q; want %+v, %q", zone, w, missing, tc.want, tc.missing)
		}
	}
}

// TestSyncerKick: kicks while the syncer is busy collapse into one.
func TestSyncerKick(t *testing.T) {
	s := NewSyncer(Parent{}, 0, nil, nil, nil)
	for range 3 {
		s.Kick()
	}
	if n := len(s.kick); n != 1 {
		t.Errorf("%d kicks pending, want 1", n)
	}
}
