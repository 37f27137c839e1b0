package persist

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestLoad: what is loaded, per zone, from which files; which zones are
// answered from their copy, until when, and from which serial the live
// index starts.
func TestLoad(t *testing.T) {
	zones := []string{"example.com.", "example.org."}
	from, _ := ptIndex(t, zones, map[string][]string{"k": {"a.example.com. 60 IN A 192.0.2.1", "a.example.org. 60 IN A 192.0.2.2"}})
	s := from.Snapshot()
	serials := []uint32{s.Serial(0), s.Serial(1)}
	written := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	expire := time.Duration(s.SOA(0)[0].(*dns.SOA).Expire) * time.Second
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) // after both copies are written
		age     time.Duration
		all     bool     // every zone answered from its copy
		served  []bool   // per zone
		serials []uint32 // per zone, the live index's first serial; 0: none
		written []int64  // per zone
	}{
		{"both", nil, time.Minute, true, []bool{true, true}, serials, []int64{written.Unix(), written.Unix()}},
		{"one missing", func(t *testing.T, dir string) { os.Remove(Path(dir, "example.org.")) }, time.Minute, false,
			[]bool{true, false}, []uint32{serials[0], 0}, []int64{written.Unix(), 0}},
		{"one corrupt", func(t *testing.T, dir string) {
			path := Path(dir, "example.com.")
			data, _ := os.ReadFile(path)
			os.WriteFile(path, data[:len(data)-20], 0o644)
		}, time.Minute, false, []bool{false, true}, []uint32{0, serials[1]}, []int64{0, written.Unix()}},
		// An expired copy is not served, but the serial never goes back.
		{"expired", nil, expire, false, []bool{false, false}, serials, []int64{written.Unix(), written.Unix()}},
		{"none", func(t *testing.T, dir string) {
			os.Remove(Path(dir, "example.com."))
			os.Remove(Path(dir, "example.org."))
		}, 0, false,
			[]bool{false, false}, []uint32{0, 0}, []int64{0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for zi, zone := range zones {
				records := append(append([]dns.RR{}, s.NS(zi)...), s.Records(zi)...)
				if err := Write(Path(dir, zone), zone, s.SOA(zi)[0].(*dns.SOA), records, written); err != nil {
					t.Fatal(err)
				}
			}
			if tc.prepare != nil {
				tc.prepare(t, dir)
			}
			clk := &testutil.Clock{}
			clk.Set(written.Add(tc.age))
			c, got := Load(LoadConfig{Dir: dir, Zones: zones, Now: clk.Now,
				SOA: func(zone string, serial uint32) *dns.SOA {
					return testutil.RR(zone + " 60 IN SOA ns. h. 1 2 3 4 5").(*dns.SOA)
				},
				NS: func(zone string) []dns.RR { return nil }})
			if !slices.Equal(got, tc.serials) {
				t.Errorf("serials %v, want %v", got, tc.serials)
			}
			if all := c.AllFresh(clk.Now()); all != tc.all {
				t.Errorf("AllFresh = %v, want %v", all, tc.all)
			}
			for zi, zone := range zones {
				snap := c.Answering(zi, clk.Now())
				if served := snap != nil; served != tc.served[zi] {
					t.Errorf("%s answered from its copy: %v, want %v", zone, served, tc.served[zi])
				}
				if snap != nil {
					answer, _, _, _ := snap.Lookup(zi, "a."+zone, dns.TypeA)
					if want := s.Records(zi); len(answer) != 1 || answer[0].String() != want[0].String() || snap.Serial(zi) != serials[zi] {
						t.Errorf("%s: answer %v at serial %d, want %v at %d", zone, answer, snap.Serial(zi), want, serials[zi])
					}
				}
				if got := c.Written(zi); got != tc.written[zi] {
					t.Errorf("%s written at %d, want %d", zone, got, tc.written[zi])
				}
			}
			c.Live()
			for zi := range zones {
				if c.Answering(zi, clk.Now()) != nil {
					t.Errorf("zone %d answered from its copy once live", zi)
				}
			}
			c.SetWritten("example.org.", written.Add(time.Hour))
			if got := c.Written(1); got != written.Add(time.Hour).Unix() {
				t.Errorf("after a write: written at %d", got)
			}
		})
	}
}
