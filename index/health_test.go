package index

import (
	"slices"
	"testing"
)

type healthLog struct {
	zone  []ZoneHealth
	opens []string
}

func (l *healthLog) SerialChanged(string, uint32) {}
func (l *healthLog) Conflict(string, string)      {}
func (l *healthLog) HealthChanged(_ string, h ZoneHealth) {
	l.zone = append(l.zone, h)
}
func (l *healthLog) FailOpen(_, name string, open bool) {
	if open {
		l.opens = append(l.opens, "+"+name)
	} else {
		l.opens = append(l.opens, "-"+name)
	}
}

func TestChooseHealthy(t *testing.T) {
	type obj struct {
		key       string
		addr      string
		unhealthy bool
		priority  int32
	}
	for _, c := range []struct {
		desc string
		objs []obj
		want string // dumpNode of www
		zh   ZoneHealth
	}{
		{
			desc: "all healthy: union",
			objs: []obj{{"a", "192.0.2.1", false, 0}, {"b", "192.0.2.2", false, 0}},
			want: "www.example.com. [A 60:192.0.2.1 60:192.0.2.2]",
		},
		{
			desc: "one unhealthy of two: the healthy one answers",
			objs: []obj{{"a", "192.0.2.1", true, 0}, {"b", "192.0.2.2", false, 0}},
			want: "www.example.com. [A 60:192.0.2.2]",
			zh:   ZoneHealth{Unhealthy: 1},
		},
		{
			desc: "every one unhealthy: fail open, all answer",
			objs: []obj{{"a", "192.0.2.1", true, 0}, {"b", "192.0.2.2", true, 0}},
			want: "www.example.com. [A 60:192.0.2.1 60:192.0.2.2]",
			zh:   ZoneHealth{Unhealthy: 2, FailOpen: 1},
		},
		{
			desc: "one object alone, unhealthy: fail open",
			objs: []obj{{"a", "192.0.2.1", true, 0}},
			want: "www.example.com. [A 60:192.0.2.1]",
			zh:   ZoneHealth{Unhealthy: 1, FailOpen: 1},
		},
		{
			desc: "priorities: the lowest healthy one answers alone",
			objs: []obj{{"a", "192.0.2.1", false, 1}, {"b", "192.0.2.2", false, 2}},
			want: "www.example.com. [A 60:192.0.2.1]",
		},
		{
			desc: "priorities: the best unhealthy, the standby answers",
			objs: []obj{{"a", "192.0.2.1", true, 1}, {"b", "192.0.2.2", false, 2}, {"c", "192.0.2.3", false, 3}},
			want: "www.example.com. [A 60:192.0.2.2]",
			zh:   ZoneHealth{Unhealthy: 1, Standby: 1},
		},
		{
			desc: "equal priorities answer together",
			objs: []obj{{"a", "192.0.2.1", false, 1}, {"b", "192.0.2.2", false, 1}, {"c", "192.0.2.3", false, 2}},
			want: "www.example.com. [A 60:192.0.2.1 60:192.0.2.2]",
		},
		{
			desc: "priorities, all unhealthy: fail open over every priority",
			objs: []obj{{"a", "192.0.2.1", true, 1}, {"b", "192.0.2.2", true, 2}},
			want: "www.example.com. [A 60:192.0.2.1 60:192.0.2.2]",
			zh:   ZoneHealth{Unhealthy: 2, FailOpen: 1},
		},
	} {
		t.Run(c.desc, func(t *testing.T) {
			ix, _ := newTestIndex(t, "example.com.")
			var l healthLog
			ix.setListener(&l)
			ix.Flush()
			for _, o := range c.objs {
				ix.UpdateClaim("Service/ns/"+o.key, Claim{Namespace: "ns", Unhealthy: o.unhealthy, Priority: o.priority},
					qtRRs("www.example.com. 60 IN A "+o.addr))
			}
			if got := dumpNode(ix.Snapshot().get("www.example.com.")); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
			if got := ix.Health("example.com."); got != c.zh {
				t.Errorf("health %+v, want %+v", got, c.zh)
			}
			// Withdrawing every object clears the counts.
			for _, o := range c.objs {
				ix.UpdateClaim("Service/ns/"+o.key, Claim{}, nil)
			}
			if got := ix.Health("example.com."); got != (ZoneHealth{}) {
				t.Errorf("after removal: %+v", got)
			}
			checkIndexInvariants(t, ix)
		})
	}
}

// A health flip changes the claim alone: the name is rebuilt, and the
// listener hears when the name starts and stops being answered fail-open.
func TestHealthFlip(t *testing.T) {
	ix, _ := newTestIndex(t, "example.com.")
	var l healthLog
	ix.setListener(&l)
	ix.Flush()
	rr := func(a string) string { return "www.example.com. 60 IN A " + a }
	ix.UpdateClaim("Service/ns/a", Claim{Namespace: "ns"}, qtRRs(rr("192.0.2.1")))
	ix.UpdateClaim("Service/ns/b", Claim{Namespace: "ns"}, qtRRs(rr("192.0.2.2")))
	www := func() string { return dumpNode(ix.Snapshot().get("www.example.com.")) }
	ix.UpdateClaim("Service/ns/a", Claim{Namespace: "ns", Unhealthy: true}, qtRRs(rr("192.0.2.1")))
	if got := www(); got != "www.example.com. [A 60:192.0.2.2]" {
		t.Errorf("a unhealthy: %s", got)
	}
	ix.UpdateClaim("Service/ns/b", Claim{Namespace: "ns", Unhealthy: true}, qtRRs(rr("192.0.2.2")))
	if got := www(); got != "www.example.com. [A 60:192.0.2.1 60:192.0.2.2]" {
		t.Errorf("both unhealthy: %s", got)
	}
	ix.UpdateClaim("Service/ns/a", Claim{Namespace: "ns"}, qtRRs(rr("192.0.2.1")))
	if got := www(); got != "www.example.com. [A 60:192.0.2.1]" {
		t.Errorf("a back: %s", got)
	}
	if !slices.Equal(l.opens, []string{"+www.example.com.", "-www.example.com."}) {
		t.Errorf("fail-open calls %q", l.opens)
	}
	if len(l.zone) == 0 || l.zone[len(l.zone)-1] != (ZoneHealth{Unhealthy: 1}) {
		t.Errorf("zone health calls %+v", l.zone)
	}
	checkIndexInvariants(t, ix)
}

// SetDown: a cluster's objects count as unhealthy, whatever their claims.
func TestSetDown(t *testing.T) {
	ix, _ := newTestIndex(t, "example.com.")
	var l healthLog
	ix.setListener(&l)
	ix.Flush()
	rr := func(a string) string { return "www.example.com. 60 IN A " + a }
	ix.UpdateClaim("one/Service/ns/a", Claim{Namespace: "one/ns", Priority: 1}, qtRRs(rr("192.0.2.1"), "only.example.com. 60 IN A 192.0.2.1"))
	ix.UpdateClaim("two/Service/ns/a", Claim{Namespace: "two/ns", Priority: 2}, qtRRs(rr("192.0.2.2")))
	www := func() string { return dumpNode(ix.Snapshot().get("www.example.com.")) }
	if got := www(); got != "www.example.com. [A 60:192.0.2.1]" {
		t.Errorf("priority 1 answers: %s", got)
	}
	ix.SetDown("one/", true)
	if got := www(); got != "www.example.com. [A 60:192.0.2.2]" {
		t.Errorf("one down, the standby answers: %s", got)
	}
	if got := dumpNode(ix.Snapshot().get("only.example.com.")); got != "only.example.com. [A 60:192.0.2.1]" {
		t.Errorf("a name of one alone fails open: %s", got)
	}
	if got, want := ix.Health("example.com."), (ZoneHealth{Unhealthy: 2, FailOpen: 1, Standby: 1}); got != want {
		t.Errorf("health %+v, want %+v", got, want)
	}
	// Objects put while down are down too.
	ix.UpdateClaim("one/Service/ns/b", Claim{Namespace: "one/ns", Priority: 1}, qtRRs(rr("192.0.2.3")))
	if got := www(); got != "www.example.com. [A 60:192.0.2.2]" {
		t.Errorf("a new object of one while down: %s", got)
	}
	ix.SetDown("one/", false)
	if got := www(); got != "www.example.com. [A 60:192.0.2.1 60:192.0.2.3]" {
		t.Errorf("one back: %s", got)
	}
	if got := ix.Health("example.com."); got != (ZoneHealth{}) {
		t.Errorf("health after: %+v", got)
	}
	checkIndexInvariants(t, ix)
}
