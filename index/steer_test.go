package index

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// steerObj is an object publishing addresses at www.example.com.
type steerObj struct {
	key       string
	addrs     []string
	weight    uint32
	loc       string // ParseLocation form, or ""
	unhealthy bool
	priority  int32
	// ns is the tenant ("ns" when empty); clusterWeight and clusterLoc its
	// cluster's steering alone (Claim.ClusterWeight, ClusterLocation).
	ns            string
	clusterWeight uint32
	clusterLoc    string
}

// location parses s, the zero Location when empty.
func location(t testing.TB, s string) Location {
	t.Helper()
	if s == "" {
		return Location{}
	}
	l, err := ParseLocation(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func steerIndex(t testing.TB, objs []steerObj) *Index {
	t.Helper()
	ix, _ := newTestIndex(t, "example.com.")
	for _, o := range objs {
		var rrs []dns.RR
		for _, a := range o.addrs {
			typ := "A"
			if strings.Contains(a, ":") {
				typ = "AAAA"
			}
			rrs = append(rrs, qtRR("www.example.com. 60 IN "+typ+" "+a))
		}
		claim := Claim{Namespace: cmp.Or(o.ns, "ns"), Weight: o.weight, Unhealthy: o.unhealthy, Priority: o.priority,
			Location: location(t, o.loc), ClusterWeight: o.clusterWeight, ClusterLocation: location(t, o.clusterLoc)}
		ix.UpdateClaim(o.key, claim, rrs)
	}
	ix.Flush()
	return ix
}

// answer returns the addresses answered for qtype at www with client c.
func answer(t testing.TB, ix *Index, qtype uint16, c *Client) []string {
	t.Helper()
	ans, _, _, res := ix.Snapshot().LookupFor(0, "www.example.com.", qtype, c)
	if res != Success {
		t.Fatalf("result %v, want Success", res)
	}
	var out []string
	for _, rr := range ans {
		switch x := rr.(type) {
		case *dns.A:
			out = append(out, x.A.String())
		case *dns.AAAA:
			out = append(out, x.AAAA.String())
		}
	}
	return out
}

// drawn counts the answers of n draws evenly spread.
func drawn(t testing.TB, ix *Index, qtype uint16, c Client, n int) map[string]int {
	counts := map[string]int{}
	for i := range n {
		c.Draw = uint32((2*uint64(i) + 1) * (1 << 31) / uint64(n)) // the middle of each nth
		counts[strings.Join(answer(t, ix, qtype, &c), " ")]++
	}
	return counts
}

func TestSteerWeights(t *testing.T) {
	ix := steerIndex(t, []steerObj{
		{key: "a", addrs: []string{"192.0.2.1", "192.0.2.2"}, weight: 3},
		{key: "b", addrs: []string{"192.0.2.3"}}, // unset: 1
		{key: "c", addrs: []string{"2001:db8::1"}, weight: 5},
	})
	got := drawn(t, ix, dns.TypeA, Client{}, 1000)
	want := map[string]int{"192.0.2.1 192.0.2.2": 750, "192.0.2.3": 250}
	if !mapsEqual(got, want) {
		t.Errorf("A answers %v, want %v", got, want)
	}
	// One target of AAAA: no choice, the whole RRset.
	if got := answer(t, ix, dns.TypeAAAA, &Client{}); !slices.Equal(got, []string{"2001:db8::1"}) {
		t.Errorf("AAAA %v", got)
	}
	// Without a client (AXFR's view, Lookup), every address.
	if got, _, _, _ := ix.Snapshot().Lookup(0, "www.example.com.", dns.TypeA); len(got) != 3 {
		t.Errorf("Lookup answers %d addresses, want 3", len(got))
	}
	if got := len(ix.Snapshot().Records(0)); got != 4 {
		t.Errorf("the zone's records: %d, want 4", got)
	}
}

// TestSteerTenants: the weights and locations of objects' annotations steer
// a name only while one tenant publishes there. Where several do (union
// lets every namespace publish anywhere), each target counts with its
// cluster's weight and location alone: a tenant's weight of 1000 at another
// tenant's name takes its share as one target of an unsteered name, not
// 1000 of 1001 answers.
func TestSteerTenants(t *testing.T) {
	eu := Client{Continent: "EU", Country: "DE"}
	for _, c := range []struct {
		desc   string
		objs   []steerObj
		client Client
		want   map[string]int // of 1000 draws
	}{
		{
			desc: "one tenant: its annotations count",
			objs: []steerObj{{key: "a", addrs: []string{"192.0.2.1"}}, {key: "b", addrs: []string{"192.0.2.2"}, weight: 3}},
			want: map[string]int{"192.0.2.1": 250, "192.0.2.2": 750},
		},
		{
			desc: "another tenant's weight of 1000 is set aside, and the owner's: all targets answer, as unsteered",
			objs: []steerObj{
				{key: "a", ns: "team-a", addrs: []string{"192.0.2.1"}},
				{key: "a2", ns: "team-a", addrs: []string{"192.0.2.2"}, weight: 2},
				{key: "b", ns: "team-b", addrs: []string{"192.0.2.3"}, weight: 1000},
			},
			want: map[string]int{"192.0.2.1 192.0.2.2 192.0.2.3": 1000},
		},
		{
			desc: "several tenants: the clusters' weights count, not the objects'",
			objs: []steerObj{
				{key: "a", ns: "one/apps", addrs: []string{"192.0.2.1"}, weight: 3, clusterWeight: 3},
				{key: "b", ns: "two/apps", addrs: []string{"192.0.2.3"}, weight: 1000 * 1, clusterWeight: 1},
			},
			want: map[string]int{"192.0.2.1": 750, "192.0.2.3": 250},
		},
		{
			desc:   "another tenant's location is set aside",
			objs:   []steerObj{{key: "a", ns: "team-a", addrs: []string{"192.0.2.1"}}, {key: "b", ns: "team-b", addrs: []string{"192.0.2.3"}, loc: "continent=EU"}},
			client: eu,
			want:   map[string]int{"192.0.2.1 192.0.2.3": 1000},
		},
		{
			desc: "several tenants: the clusters' locations count",
			objs: []steerObj{
				{key: "a", ns: "one/apps", addrs: []string{"192.0.2.1"}, loc: "continent=NA", clusterLoc: "continent=EU"},
				{key: "b", ns: "two/apps", addrs: []string{"192.0.2.3"}, loc: "continent=EU", clusterLoc: "continent=NA"},
			},
			client: eu,
			want:   map[string]int{"192.0.2.1": 1000},
		},
	} {
		t.Run(c.desc, func(t *testing.T) {
			if got := drawn(t, steerIndex(t, c.objs), dns.TypeA, c.client, 1000); !mapsEqual(got, c.want) {
				t.Errorf("answers %v, want %v", got, c.want)
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestSteerComposition(t *testing.T) {
	eu := Client{Continent: "EU", Country: "DE", Regions: "DE-HE"}
	for _, c := range []struct {
		desc   string
		objs   []steerObj
		client Client
		want   map[string]int // of 100 draws
		loc    bool           // Client.Located
	}{
		{
			desc: "no weight, no location: not steered, the union",
			objs: []steerObj{{key: "a", addrs: []string{"192.0.2.1"}}, {key: "b", addrs: []string{"192.0.2.2"}}},
			want: map[string]int{"192.0.2.1 192.0.2.2": 100},
		},
		{
			desc: "unhealthy target withdrawn before the draw",
			objs: []steerObj{
				{key: "a", addrs: []string{"192.0.2.1"}, weight: 9, unhealthy: true},
				{key: "b", addrs: []string{"192.0.2.2"}, weight: 1},
				{key: "c", addrs: []string{"192.0.2.3"}, weight: 1},
			},
			want: map[string]int{"192.0.2.2": 50, "192.0.2.3": 50},
		},
		{
			desc: "every target unhealthy: fail open, weights over all",
			objs: []steerObj{
				{key: "a", addrs: []string{"192.0.2.1"}, weight: 3, unhealthy: true},
				{key: "b", addrs: []string{"192.0.2.2"}, weight: 1, unhealthy: true},
			},
			want: map[string]int{"192.0.2.1": 75, "192.0.2.2": 25},
		},
		{
			desc: "priority before geography: the EU target is on standby",
			objs: []steerObj{
				{key: "a", addrs: []string{"192.0.2.1"}, loc: "continent=EU", priority: 1},
				{key: "b", addrs: []string{"192.0.2.2"}, loc: "continent=NA"},
				{key: "c", addrs: []string{"192.0.2.3"}, loc: "continent=AS"},
			},
			client: eu,
			want:   map[string]int{"192.0.2.2": 50, "192.0.2.3": 50},
			loc:    true,
		},
		{
			desc: "region before country before continent",
			objs: []steerObj{
				{key: "a", addrs: []string{"192.0.2.1"}, loc: "continent=EU,country=DE,region=DE-HE"},
				{key: "b", addrs: []string{"192.0.2.2"}, loc: "continent=EU,country=DE,region=DE-BY"},
				{key: "c", addrs: []string{"192.0.2.3"}, loc: "continent=EU,country=FR"},
			},
			client: eu,
			want:   map[string]int{"192.0.2.1": 100},
			loc:    true,
		},
		{
			desc: "country, then weights among the matches",
			objs: []steerObj{
				{key: "a", addrs: []string{"192.0.2.1"}, loc: "country=DE", weight: 1},
				{key: "b", addrs: []string{"192.0.2.2"}, loc: "country=DE", weight: 3},
				{key: "c", addrs: []string{"192.0.2.3"}, loc: "continent=EU", weight: 100},
			},
			client: eu,
			want:   map[string]int{"192.0.2.1": 25, "192.0.2.2": 75},
			loc:    true,
		},
		{
			desc: "no match: the default location",
			objs: []steerObj{
				{key: "a", addrs: []string{"192.0.2.1"}, loc: "continent=NA"},
				{key: "b", addrs: []string{"192.0.2.2"}, loc: "continent=AS"},
			},
			client: Client{Continent: "EU", Default: Location{Continent: "AS"}},
			want:   map[string]int{"192.0.2.2": 100},
			loc:    true,
		},
		{
			desc: "no match and no default: every target, by weight",
			objs: []steerObj{
				{key: "a", addrs: []string{"192.0.2.1"}, loc: "continent=NA", weight: 1},
				{key: "b", addrs: []string{"192.0.2.2"}, loc: "continent=AS", weight: 4},
				{key: "c", addrs: []string{"192.0.2.3"}, weight: 5},
			},
			client: Client{},
			want:   map[string]int{"192.0.2.1": 10, "192.0.2.2": 40, "192.0.2.3": 50},
			loc:    true,
		},
	} {
		t.Run(c.desc, func(t *testing.T) {
			ix := steerIndex(t, c.objs)
			if got := drawn(t, ix, dns.TypeA, c.client, 100); !mapsEqual(got, c.want) {
				t.Errorf("answers %v, want %v", got, c.want)
			}
			cl := c.client
			answer(t, ix, dns.TypeA, &cl)
			if cl.Located != c.loc {
				t.Errorf("Located %v, want %v", cl.Located, c.loc)
			}
		})
	}
}

// TestSteerNeverEmpty: whatever the client and the draw, a steered name
// answers some address of each type it has.
func TestSteerNeverEmpty(t *testing.T) {
	ix := steerIndex(t, []steerObj{
		{key: "a", addrs: []string{"192.0.2.1"}, loc: "continent=EU", weight: 1},
		{key: "b", addrs: []string{"2001:db8::2"}, loc: "continent=NA", weight: 1},
		{key: "c", addrs: []string{"192.0.2.3", "2001:db8::3"}, weight: 7},
	})
	for _, cl := range []Client{{}, {Continent: "EU"}, {Continent: "NA"}, {Country: "ZZ", Default: Location{Country: "YY"}}} {
		for _, draw := range []uint32{0, 1, math.MaxUint32 / 2, math.MaxUint32} {
			for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
				c := cl
				c.Draw = draw
				if got := answer(t, ix, qtype, &c); len(got) == 0 {
					t.Errorf("client %+v, %s: no answer", c, dns.TypeToString[qtype])
				}
			}
		}
	}
}

// TestSteerRepublish: a change of weight alone rebuilds the name.
func TestSteerRepublish(t *testing.T) {
	ix := steerIndex(t, []steerObj{
		{key: "a", addrs: []string{"192.0.2.1"}, weight: 1},
		{key: "b", addrs: []string{"192.0.2.2"}, weight: 1},
	})
	rr := []dns.RR{qtRR("www.example.com. 60 IN A 192.0.2.1")}
	ix.UpdateClaim("a", Claim{Namespace: "ns", Weight: 9}, rr)
	got := drawn(t, ix, dns.TypeA, Client{}, 100)
	if want := map[string]int{"192.0.2.1": 90, "192.0.2.2": 10}; !mapsEqual(got, want) {
		t.Errorf("after the change: %v, want %v", got, want)
	}
	n := ix.Snapshot().get("www.example.com.")
	if len(n.steer) != 2 || n.steer[0].weight != 9 {
		t.Errorf("unpacked targets %+v", n.steer)
	}
}

func TestParseLocation(t *testing.T) {
	for _, c := range []struct {
		in, want string
		bad      bool
	}{
		{in: "continent=eu", want: "continent=EU"},
		{in: "region=us-east-1, country=US", want: "country=US,region=US-EAST-1"},
		{in: "continent=EU country=DE region=DE-HE", want: "continent=EU,country=DE,region=DE-HE"},
		{in: "", bad: true},
		{in: "planet=earth", bad: true},
		{in: "country=D|E", bad: true},
		{in: "country=DE,country=FR", bad: true},
		{in: "country=" + strings.Repeat("x", 64), bad: true},
	} {
		l, err := ParseLocation(c.in)
		if (err != nil) != c.bad || err == nil && l.String() != c.want {
			t.Errorf("ParseLocation(%q) = %q, %v", c.in, l, err)
		}
	}
}

// BenchmarkSteeredLookup: the lookup of plain names (one object of one
// address; two objects) and of steered ones (two objects with weights; with
// locations), as the plugin makes it.
func BenchmarkSteeredLookup(b *testing.B) {
	for _, c := range []struct {
		name string
		objs []steerObj
	}{
		{"plain_one", []steerObj{{key: "a", addrs: []string{"192.0.2.1"}}}},
		{"plain", []steerObj{{key: "a", addrs: []string{"192.0.2.1"}}, {key: "b", addrs: []string{"192.0.2.2"}}}},
		{"weighted", []steerObj{{key: "a", addrs: []string{"192.0.2.1"}, weight: 3}, {key: "b", addrs: []string{"192.0.2.2"}}}},
		{"geo", []steerObj{{key: "a", addrs: []string{"192.0.2.1"}, loc: "continent=EU,country=DE"}, {key: "b", addrs: []string{"192.0.2.2"}, loc: "continent=NA"}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ix := steerIndex(b, c.objs)
			snap := ix.Snapshot()
			b.ReportAllocs()
			// CPU time of this thread as well as wall time: on a loaded
			// machine the wall time is mostly the wait for a core.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start, i := threadCPU(), 0
			for ; b.Loop(); i++ {
				cl := Client{Continent: "EU", Country: "DE", Regions: "DE-HE", Draw: uint32(i) * 2654435761}
				snap.LookupFor(0, "www.example.com.", dns.TypeA, &cl)
			}
			b.ReportMetric(float64(threadCPU()-start)/float64(i), "cpu-ns/op")
		})
	}
}

// threadCPU returns the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
