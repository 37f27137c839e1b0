package index

import (
	"fmt"
	"slices"
	"testing"

	"github.com/miekg/dns"
)

// entries returns the number of entries of the newest table of v's tables,
// and how many of them more than one view holds.
func entries(v *tableView) (all, shared int) {
	v.t.newest.Load().eachEntry(func(e entry) {
		all++
		if e.ref.views()&(e.ref.views()-1) != 0 {
			shared++
		}
	})
	return all, shared
}

// TestTablesViews runs the cases of views of one Shared: the names and
// nodes they agree on are one entry, one that differs has its own, each
// snapshot reads only its view, the snapshots of the others follow a
// publish to the newest table, and a view that leaves takes its entries.
func TestTablesViews(t *testing.T) {
	a4 := func(ip string) []dns.RR { return qtRRs("www.example.com. 60 IN A " + ip) }
	cases := []struct {
		name    string
		views   []string // the address each view publishes at www (none: "")
		entries int      // of the table: the apex once, www per distinct address
		shared  int      // entries more than one view holds
	}{
		{"one view", []string{"192.0.2.1"}, 2, 0},
		{"agree", []string{"192.0.2.1", "192.0.2.1", "192.0.2.1"}, 2, 2},
		{"differ", []string{"192.0.2.1", "192.0.2.2"}, 3, 1},
		{"two pairs", []string{"10.0.0.1", "192.0.2.1", "10.0.0.1", "192.0.2.1"}, 3, 3},
		{"one without", []string{"192.0.2.1", ""}, 2, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sh := newShared()
			ixs := make([]*Index, len(c.views))
			for v, ip := range c.views {
				ixs[v] = New(Config{Zones: []string{"example.com."}, SOA: indexSOA, Shared: sh})
				ixs[v].Flush()
				if ip != "" {
					ixs[v].Update("Service/ns/www", a4(ip))
				}
			}
			if all, shared := entries(ixs[0].nodes.pub); all != c.entries || shared != c.shared {
				t.Errorf("%d entries, %d shared; want %d, %d", all, shared, c.entries, c.shared)
			}
			newest := ixs[0].nodes.pub.t.newest.Load()
			for v, ip := range c.views {
				s := ixs[v].Snapshot()
				if s.names.top != newest.top {
					t.Errorf("view %d reads an older table", v)
				}
				answer, _, _, res := s.Lookup(0, "www.example.com.", dns.TypeA)
				switch {
				case ip == "" && res != NameError:
					t.Errorf("view %d: %v %v, want NXDOMAIN", v, res, answer)
				case ip != "" && (res != Success || len(answer) != 1 || answer[0].(*dns.A).A.String() != ip):
					t.Errorf("view %d: %v %v, want %s", v, res, answer, ip)
				}
				if want := 1 + b2i(ip != ""); s.Len() != want {
					t.Errorf("view %d: Len %d, want %d", v, s.Len(), want)
				}
			}
			// The last view leaves: the table keeps only the others' entries;
			// its snapshot still answers.
			last := ixs[len(ixs)-1]
			before := last.Snapshot()
			last.Close()
			if last.Snapshot() != before {
				t.Error("a view's last snapshot changed when it left")
			}
			left := 0
			last.nodes.pub.t.newest.Load().eachEntry(func(e entry) {
				if e.ref&last.nodes.pub.bit != 0 {
					left++
				}
			})
			if left != 0 {
				t.Errorf("%d entries of the view that left", left)
			}
			for _, ix := range ixs[:len(ixs)-1] {
				ix.Close()
			}
			if all, _ := entries(ixs[0].nodes.pub); all != 0 {
				t.Errorf("%d entries after every view left", all)
			}
		})
	}
}

// TestTablesAhead: a view that folds its initial sync into the table
// publishes nothing until its first Flush, while another view publishes:
// its snapshot stays, the other's follows.
func TestTablesAhead(t *testing.T) {
	defer func(old int) { syncBatch = old }(syncBatch)
	syncBatch = 2
	sh := newShared()
	live := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, Shared: sh})
	live.Flush()
	syncing := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, Shared: sh})
	initial := syncing.Snapshot()
	for i := range 5 {
		syncing.Update(fmt.Sprintf("s%d", i), qtRRs(fmt.Sprintf("s%d.example.com. 60 IN A 192.0.2.1", i)))
	}
	if !syncing.nodes.pub.ahead {
		t.Fatal("the syncing view never folded")
	}
	live.Update("l", qtRRs("l.example.com. 60 IN A 192.0.2.2"))
	if syncing.Snapshot() != initial || syncing.Snapshot().Has("s0.example.com.") {
		t.Error("the syncing view's snapshot moved before its first Flush")
	}
	if s := live.Snapshot(); !s.Has("l.example.com.") || s.Has("s0.example.com.") {
		t.Error("the live view reads the other's names, or not its own")
	}
	syncing.Flush()
	if got := snapshotNames(syncing.Snapshot()); !slices.Equal(got, []string{"example.com.", "s0.example.com.", "s1.example.com.", "s2.example.com.", "s3.example.com.", "s4.example.com."}) {
		t.Errorf("after Flush: %q", got)
	}
	if live.Snapshot().names.top != syncing.Snapshot().names.top {
		t.Error("the live view's snapshot did not follow the other's publish")
	}
}

// TestTablesManyViews: more views than one table serves take a second
// table, and every view answers its own.
func TestTablesManyViews(t *testing.T) {
	sh := newShared()
	var ixs []*Index
	for v := range maxViews + 3 {
		ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, Shared: sh})
		ix.Flush()
		ix.Update("Service/ns/www", qtRRs(fmt.Sprintf("www.example.com. 60 IN TXT \"%d\"", v%5)))
		ixs = append(ixs, ix)
	}
	if len(sh.tables) != 2 {
		t.Errorf("%d tables for %d views", len(sh.tables), len(ixs))
	}
	for v, ix := range ixs {
		answer, _, _, _ := ix.Snapshot().Lookup(0, "www.example.com.", dns.TypeTXT)
		if len(answer) != 1 || answer[0].(*dns.TXT).Txt[0] != fmt.Sprint(v%5) {
			t.Errorf("view %d answers %v", v, answer)
		}
	}
	// A view that left gives its place to the next.
	ixs[3].Close()
	ix := New(Config{Zones: []string{"example.com."}, SOA: indexSOA, Shared: sh})
	if ix.nodes.pub.t != sh.tables[0] || ix.nodes.pub.i != 3 {
		t.Errorf("the new view took place %d of table %p", ix.nodes.pub.i, ix.nodes.pub.t)
	}
}
