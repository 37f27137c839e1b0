package index

import (
	"testing"
)

// TestObjectsVariants stores the records of one object in the object
// tables of several views of one Shared and checks, after each step, where
// each view keeps them: one of the Shared's two variants, as views that
// agree do, or its own (a third set of records, or a claim of its own).
func TestObjectsVariants(t *testing.T) {
	private := packRecords(qtRRs("www.example.com. 60 IN A 10.0.0.1"))
	public := packRecords(qtRRs("www.example.com. 60 IN A 198.51.100.1"))
	other := packRecords(qtRRs("www.example.com. 60 IN A 192.0.2.1"))
	plain, rare := Claim{Namespace: "ns", Created: 1}, Claim{Namespace: "ns", Created: 1, Priority: 2}
	steps := []struct {
		view  int
		wire  []byte // nil: remove
		claim Claim
		want  [4]uint32 // objs value per view: notHeld, heldFirst, heldSecond, ownBase+
	}{
		{0, private, plain, [4]uint32{heldFirst, 0, 0, 0}},
		{1, public, plain, [4]uint32{heldFirst, heldSecond, 0, 0}},
		{2, private, plain, [4]uint32{heldFirst, heldSecond, heldFirst, 0}},
		{3, public, plain, [4]uint32{heldFirst, heldSecond, heldFirst, heldSecond}},
		{3, other, plain, [4]uint32{heldFirst, heldSecond, heldFirst, ownBase}},
		{2, private, rare, [4]uint32{heldFirst, heldSecond, ownBase, ownBase}},
		{0, nil, plain, [4]uint32{0, heldSecond, ownBase, ownBase}},
		{2, nil, plain, [4]uint32{0, heldSecond, 0, ownBase}},
		// No view keeps the first variant now: the next records become it.
		{3, other, rare, [4]uint32{0, heldSecond, 0, ownBase}},
		{0, other, plain, [4]uint32{heldFirst, heldSecond, 0, ownBase}},
		{3, other, plain, [4]uint32{heldFirst, heldSecond, 0, heldFirst}},
	}
	sh := newShared()
	var views [4]objects
	for v := range views {
		views[v] = objects{sh: sh}
	}
	const key = "Service/ns/www"
	for i, s := range steps {
		o := &views[s.view]
		id, _, had := o.find(key)
		if s.wire == nil {
			o.remove(id)
		} else {
			o.store(key, id, had, s.claim, s.wire)
		}
		for v := range views {
			id, wire, held := views[v].find(key)
			got := uint32(0)
			if held {
				got = min(views[v].objs.get(uint32(id)), ownBase)
			}
			if got != s.want[v] {
				t.Errorf("step %d: view %d keeps %d, want %d", i, v, got, s.want[v])
			}
			if held && views[v].records(id) == nil || held != (wire != nil) {
				t.Errorf("step %d: view %d holds %v, records %d bytes", i, v, held, len(wire))
			}
		}
	}
	id, _, _ := views[1].find(key)
	if w1, w3 := views[1].records(id), views[3].records(id); string(w1) != string(public) || string(w3) != string(other) {
		t.Errorf("records of views 1 and 3: %x, %x", w1, w3)
	}
	if c := views[3].claim(id); c != plain {
		t.Errorf("view 3's claim %+v, want %+v", c, plain)
	}
	for v := range views {
		if id, _, ok := views[v].find(key); ok {
			views[v].remove(id)
		}
	}
	if w := sh.second.get(0); len(sh.ids) != 0 || w.wire != nil || w.aliases != 0 {
		t.Errorf("the Shared keeps %d objects, second variant %v", len(sh.ids), w)
	}
}
