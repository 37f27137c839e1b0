package index

import (
	"slices"
	"testing"

	"github.com/miekg/dns"
)

// TestOwners runs objects on and off one name and checks, after each step,
// which keys publish there, in order, with which records, and that a name
// is kept in exactly one of the two places.
func TestOwners(t *testing.T) {
	sh := newShared()
	objs, w := objects{sh: sh}, newOwners(sh)
	const name = "a.example.com."
	for key, rrs := range map[string][]dns.RR{
		"Ingress/ns/x": qtRRs("a.example.com. 60 IN A 192.0.2.1", "b.example.com. 60 IN A 192.0.2.9"),
		"Ingress/ns/y": qtRRs("a.example.com. 60 IN A 192.0.2.2"),
		"Service/ns/z": qtRRs("0.example.com. 60 IN A 192.0.2.8", "a.example.com. 60 IN A 192.0.2.3", "a.example.com. 60 IN AAAA 2001:db8::3"),
	} {
		objs.store(key, 0, false, Claim{}, packRecords(rrs))
	}
	for i, step := range []struct {
		add    bool
		key    string
		want   []string // the keys at name, in order
		record int      // records of the last key in want
	}{
		{true, "Service/ns/z", []string{"Service/ns/z"}, 2},
		{true, "Service/ns/z", []string{"Service/ns/z"}, 2},
		{true, "Ingress/ns/x", []string{"Ingress/ns/x", "Service/ns/z"}, 2},
		{true, "Ingress/ns/y", []string{"Ingress/ns/x", "Ingress/ns/y", "Service/ns/z"}, 2},
		{false, "Ingress/ns/x", []string{"Ingress/ns/y", "Service/ns/z"}, 2},
		{false, "Ingress/ns/absent", []string{"Ingress/ns/y", "Service/ns/z"}, 2},
		{false, "Service/ns/z", []string{"Ingress/ns/y"}, 1},
		{false, "Ingress/ns/y", nil, 0},
		{false, "Ingress/ns/y", nil, 0},
	} {
		id, _, _ := objs.find(step.key)
		if step.add {
			w.add(name, id, step.key, &objs)
		} else if _, _, ok := objs.find(step.key); ok {
			w.remove(name, id, step.key, &objs)
		}
		cs := w.contributions(name, &objs, updating{})
		var keys []string
		for _, c := range cs {
			keys = append(keys, c.key)
			for _, rr := range c.rrs {
				if rr.Header().Name != name {
					t.Errorf("step %d: %s contributes %s", i, c.key, rr)
				}
			}
		}
		if !slices.Equal(keys, step.want) {
			t.Errorf("step %d: keys %q, want %q", i, keys, step.want)
		}
		if len(cs) > 0 && len(cs[len(cs)-1].rrs) != step.record {
			t.Errorf("step %d: %s contributes %d records, want %d", i, cs[len(cs)-1].key, len(cs[len(cs)-1].rrs), step.record)
		}
		single := w.one.get(name) != 0
		_, several := w.several[name]
		if single && several || single != (len(step.want) == 1) || several != (len(step.want) > 1) {
			t.Errorf("step %d: in owners %v, in shared %v, with %d keys", i, single, several, len(step.want))
		}
	}
}

func TestRecordsAt(t *testing.T) {
	wire := packRecords(qtRRs("a.example.com. 60 IN A 192.0.2.1", "b.example.com. 60 IN A 192.0.2.2", "b.example.com. 60 IN TXT \"x\"", "c.example.com. 60 IN A 192.0.2.3"))
	for _, c := range []struct {
		name string
		want int
	}{
		{"a.example.com.", 1}, {"b.example.com.", 2}, {"c.example.com.", 1}, {"0.example.com.", 0}, {"bb.example.com.", 0}, {"d.example.com.", 0},
	} {
		got := recordsAt(wire, c.name)
		if len(got) != c.want || cap(got) != len(got) {
			t.Errorf("recordsAt(%s): %d records (cap %d), want %d", c.name, len(got), cap(got), c.want)
		}
		for _, rr := range got {
			if rr.Header().Name != c.name {
				t.Errorf("recordsAt(%s) holds %s", c.name, rr)
			}
		}
	}
}
