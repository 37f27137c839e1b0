package main

import (
	"strings"
	"testing"
	"time"
)

func TestLayoutFor(t *testing.T) {
	for _, c := range []struct {
		n    int
		want layout
	}{
		{40, layout{services: 20, single: 20}},
		{1000, layout{services: 500, single: 500}},
		{10000, layout{services: 5000, single: 5000}},
		{10050, layout{services: 5000, single: 5000, multi: 1, multiHosts: 50}},
		{100000, layout{services: 5000, single: 5000, multi: 900, multiHosts: 100}},
		{1000000, layout{services: 5000, single: 5000, multi: 9900, multiHosts: 100}},
	} {
		if got := layoutFor(c.n, false); got != c.want {
			t.Errorf("layoutFor(%d) = %+v, want %+v", c.n, got, c.want)
		}
	}
	if got, want := layoutFor(100000, true), (layout{single: 100000}); got != want {
		t.Errorf("layoutFor(100000, single) = %+v, want %+v", got, want)
	}
}

// TestRecords: every size publishes exactly n distinct names, and a bigger
// size keeps every name of a smaller one with the same address.
func TestRecords(t *testing.T) {
	for _, single := range []bool{false, true} {
		testRecords(t, single)
	}
}

func testRecords(t *testing.T, single bool) {
	prev := map[string]string{}
	for _, n := range []int{40, 1000, 10050, 100000} {
		recs := records(n, "bench.example.", "ns", single)
		if len(recs) != n {
			t.Fatalf("records(%d) has %d names", n, len(recs))
		}
		seen := map[string]string{}
		for _, r := range recs {
			if _, dup := seen[r.name]; dup {
				t.Fatalf("records(%d): %s twice", n, r.name)
			}
			if !strings.HasSuffix(r.name, ".bench.example.") {
				t.Fatalf("records(%d): %s outside the zone", n, r.name)
			}
			seen[r.name] = r.addr.String()
		}
		for name, addr := range prev {
			if seen[name] != addr {
				t.Errorf("records(%d): %s is %q, was %q", n, name, seen[name], addr)
			}
		}
		prev = seen
	}
}

const dnsperfOutput = `Statistics:

  Queries sent:         50401
  Queries completed:    50301 (99.80%)
  Queries lost:         100 (0.20%)

  Response codes:       NOERROR 50401 (100.00%)
  Run time (s):         2.004542
  Queries per second:   25143.399340
`

func TestStatFloat(t *testing.T) {
	for label, want := range map[string]float64{
		"Queries completed:":  50301,
		"Queries lost:":       100,
		"Queries per second:": 25143.399340,
		"Not there:":          0,
	} {
		if got := statFloat([]byte(dnsperfOutput), label); got != want {
			t.Errorf("%s %v, want %v", label, got, want)
		}
	}
}

func TestMedian(t *testing.T) {
	id := func(d time.Duration) float64 { return float64(d) }
	for _, c := range []struct {
		in   []time.Duration
		want float64
	}{
		{nil, 0},
		{[]time.Duration{3}, 3},
		{[]time.Duration{5, 1, 3}, 3},
		{[]time.Duration{4, 1, 3, 2}, 2.5},
	} {
		if got := median(c.in, id); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestPublishDelay(t *testing.T) {
	r := &sizeResult{published: publishedLine("[INFO] plugin/k8s_gateway: synced 2 kinds for zones bench.example.: published 2065 names 139ms after the informers started\n")}
	if d, ok := r.publishDelay(); !ok || d != 139*time.Millisecond {
		t.Errorf("publishDelay of %q = %v, %v", r.published, d, ok)
	}
}

func TestGCCPU(t *testing.T) {
	for _, c := range []struct {
		out  string
		want time.Duration
	}{
		{"", 0},
		{"gc 1 @0.012s 3%: 0.010+0.28+0.003 ms clock, 0.021+0.12/0.21/0.054+0.007 ms cpu, 4->4->0 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P\n",
			412 * time.Microsecond},
		{"[INFO] plugin/k8s_gateway: published 3 names\n" +
			"gc 7 @1.5s 1%: 0.1+2+0.1 ms clock, 0.5+1/2/0+0.5 ms cpu, 8->9->4 MB, 9 MB goal, 0 MB stacks, 0 MB globals, 1 P\n" +
			"gc 8 @1.6s 1%: 0.1+2+0.1 ms clock, 1+0/3/0+1 ms cpu, 8->9->4 MB, 9 MB goal, 0 MB stacks, 0 MB globals, 1 P\n",
			9 * time.Millisecond},
	} {
		if got := gcCPU(c.out); got < c.want-time.Microsecond || got > c.want+time.Microsecond {
			t.Errorf("gcCPU(%q) = %s, want %s", c.out, got, c.want)
		}
	}
}
