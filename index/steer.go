package index

import (
	"encoding/binary"
	"slices"

	"github.com/miekg/dns"
)

// Steering: weights and locations at a name.
//
// A name is steered when, after health and priority (health.go) chose the
// contributions that answer there, two of them or more publish addresses of
// one type and one of them has a weight or a location (Claim.Weight,
// Claim.Location; at a name several tenants publish, those of their
// clusters alone, Claim.ClusterWeight and Claim.ClusterLocation: see
// Claim.steering). Each such contribution is a target: its addresses of
// that type, its weight and its location. The table of targets is packed in
// the node beside the records when the name is built; at query time,
// LookupFor answers the addresses of one target:
//
//  1. geography: the targets whose location best matches the client's
//     (region, then country, then continent); when none does, those that
//     best match the default location; when none does either, all;
//  2. weight: among those, one target drawn with probability
//     weight / sum of weights (an unset weight counts 1).
//
// The choice scans the table where it lies and allocates nothing; the
// records answered are unpacked as any others. The RRsets themselves (zone
// transfers, ANY, the additional section) keep every target.

// steerTarget is one contribution's addresses of one type at a steered name.
type steerTarget struct {
	qtype  uint16
	weight uint32
	loc    string   // packLocation of the claim's Location
	recs   []uint16 // positions of the addresses in the node's RRset of qtype
}

// maxTargets bounds the targets of one type at a name that are steered;
// a name with more answers all of them, as it does without steering.
const maxTargets = 1024

// buildSteer returns the targets of the contributions cs at a node whose
// merged RRsets are sets, or nil when the name is not steered.
func buildSteer(cs []contribution, sets []rrset) []steerTarget {
	shared := false
	for _, c := range cs {
		if c.claim.plugin() {
			return nil
		}
		shared = shared || c.claim.Namespace != cs[0].claim.Namespace
	}
	steered := false
	for _, c := range cs {
		w, l := c.claim.steering(shared)
		steered = steered || w != 0 || !l.IsZero()
	}
	if !steered || len(cs) < 2 {
		return nil
	}
	var out []steerTarget
	for _, qtype := range [...]uint16{dns.TypeA, dns.TypeAAAA} {
		var set []dns.RR
		for i := range sets {
			if sets[i].qtype == qtype {
				set = sets[i].rrs
			}
		}
		if len(set) == 0 || len(set) > 1<<16-1 {
			continue
		}
		start := len(out)
		for _, c := range cs {
			w, l := c.claim.steering(shared)
			t := steerTarget{qtype: qtype, weight: max(w, 1), loc: packLocation(l)}
			for _, rr := range c.rrs {
				if rr.Header().Rrtype != qtype {
					continue
				}
				if i := slices.IndexFunc(set, func(x dns.RR) bool { return dns.IsDuplicate(x, rr) }); i >= 0 && !slices.Contains(t.recs, uint16(i)) {
					t.recs = append(t.recs, uint16(i))
				}
			}
			if len(t.recs) > 0 {
				slices.Sort(t.recs)
				out = append(out, t)
			}
		}
		if n := len(out) - start; n < 2 || n > maxTargets {
			out = out[:start] // one target (or too many) is no choice
		}
	}
	return out
}

// steering returns the weight and location that steer the claim's targets:
// its own, or at a name that several tenants publish (shared) its
// cluster's alone. Under Union every tenant may publish at every name, so
// none may steer a name it shares with another by its annotations: a
// weight of 1000 would take nearly every answer of a name another tenant
// publishes, and a location every client of a country; there each target
// counts as the operator set its cluster in the Corefile. Under First and
// Delegated the claims a name admits are of one tenant.
func (c Claim) steering(shared bool) (uint32, Location) {
	if shared {
		return c.ClusterWeight, c.ClusterLocation
	}
	return c.Weight, c.Location
}

func equalTargets(a, b []steerTarget) bool {
	return slices.EqualFunc(a, b, func(x, y steerTarget) bool {
		return x.qtype == y.qtype && x.weight == y.weight && x.loc == y.loc && slices.Equal(x.recs, y.recs)
	})
}

// appendSteer appends the packed table of ts:
//
//	count  uint16
//	then per target: qtype uint16, weight uint32, locLen uint8, loc,
//	recs uint16, [recs]uint16 positions
func appendSteer(b []byte, ts []steerTarget) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(len(ts)))
	for _, t := range ts {
		b = binary.LittleEndian.AppendUint16(b, t.qtype)
		b = binary.LittleEndian.AppendUint32(b, t.weight)
		b = append(b, byte(len(t.loc)))
		b = append(b, t.loc...)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(t.recs)))
		for _, r := range t.recs {
			b = binary.LittleEndian.AppendUint16(b, r)
		}
	}
	return b
}

// packedTarget is one target of a packed table.
type packedTarget struct {
	qtype  uint16
	weight uint32
	loc    []byte
	recs   []byte // [n]uint16, little-endian
}

// nextTarget returns the packed target at the start of b and the bytes after it.
func nextTarget(b []byte) (packedTarget, []byte) {
	t := packedTarget{qtype: binary.LittleEndian.Uint16(b), weight: binary.LittleEndian.Uint32(b[2:])}
	l := int(b[6])
	t.loc = b[7 : 7+l]
	n := int(binary.LittleEndian.Uint16(b[7+l:]))
	t.recs = b[9+l : 9+l+2*n]
	return t, b[9+l+2*n:]
}

// unpackSteer returns the targets of a packed table, for the writer.
func unpackSteer(b []byte) []steerTarget {
	n := int(binary.LittleEndian.Uint16(b))
	b = b[2:]
	out := make([]steerTarget, 0, n)
	for range n {
		var p packedTarget
		p, b = nextTarget(b)
		t := steerTarget{qtype: p.qtype, weight: p.weight, loc: string(p.loc)}
		for i := 0; i+1 < len(p.recs); i += 2 {
			t.recs = append(t.recs, binary.LittleEndian.Uint16(p.recs[i:]))
		}
		out = append(out, t)
	}
	return out
}

// Modes of a choice: which targets take part.
const (
	byClient  = iota // those that best match the client's location
	byDefault        // those that best match the default location
)

// level returns how closely target t matches the client (mode byClient)
// or the default location (byDefault); 0 for a target without a location.
func (c *Client) level(t *packedTarget, mode int) int {
	switch {
	case len(t.loc) == 0:
		return 0
	case mode == byClient:
		return c.match(t.loc)
	}
	return c.matchDefault(t.loc)
}

// best returns the best level of the targets of type qtype in the packed
// table b (n targets) for mode, and the sum of the weights of the targets
// at that level; found is false when there is no target of that type.
func (c *Client) best(b []byte, n int, qtype uint16, mode int) (level int, total uint64, found bool) {
	for i := 0; i < n; i++ {
		var t packedTarget
		if t, b = nextTarget(b); t.qtype != qtype {
			continue
		}
		found = true
		c.Located = c.Located || len(t.loc) > 0
		switch l := c.level(&t, mode); {
		case l > level:
			level, total = l, uint64(t.weight)
		case l == level:
			total += uint64(t.weight)
		}
	}
	return level, total, found
}

// choose returns the chosen target of type qtype in the packed table b,
// and false when the table has none of that type. It sets c.Located when
// a target of that type has a location. The targets that take part are
// those at the best level of the client's location, else of the default
// location, else all (every target is at level 0 then); one of them is
// drawn by weight. Two or three scans of the table, without allocating.
func choose(b []byte, qtype uint16, c *Client) (packedTarget, bool) {
	n := int(binary.LittleEndian.Uint16(b))
	b = b[2:]
	mode := byClient
	level, total, found := c.best(b, n, qtype, byClient)
	if !found {
		return packedTarget{}, false
	}
	if level == 0 && c.Located && !c.Default.IsZero() {
		if l, t, _ := c.best(b, n, qtype, byDefault); l > 0 {
			mode, level, total = byDefault, l, t
		}
	}
	r := uint64(c.Draw) * total >> 32 // uniform in [0, total)
	var last packedTarget
	for i := 0; i < n; i++ {
		var t packedTarget
		if t, b = nextTarget(b); t.qtype != qtype || c.level(&t, mode) != level {
			continue
		}
		if r < uint64(t.weight) {
			return t, true
		}
		r -= uint64(t.weight)
		last = t
	}
	return last, true
}

// pick unpacks the records of s at the positions of t, owned by owner.
func (s packedSet) pick(owner string, t packedTarget) []dns.RR {
	want := len(t.recs) / 2
	var out []dns.RR
	if want > 1 {
		out = make([]dns.RR, 0, want)
	}
	next := int(binary.LittleEndian.Uint16(t.recs))
	k := 0
	for b, i := s.rrs, 0; len(b) >= rrHeader && k < want; i++ {
		n := rrHeader + int(binary.BigEndian.Uint16(b[8:]))
		if i == next {
			if want == 1 {
				if rr := oneAddress(owner, b[:n]); rr != nil {
					return rr
				}
			}
			if rr, _ := unpackRR(owner, b[:n]); rr != nil {
				out = append(out, rr)
			}
			if k++; k < want {
				next = int(binary.LittleEndian.Uint16(t.recs[2*k:]))
			}
		}
		b = b[n:]
	}
	return out[:len(out):len(out)]
}

// steered returns the answer of type qtype at v for client c: the records
// of the chosen target when v is steered for qtype, else every record.
func (v view) steered(qtype uint16, owner string, c *Client) []dns.RR {
	set := v.set(qtype)
	if c == nil || set.count < 2 || qtype != dns.TypeA && qtype != dns.TypeAAAA {
		return set.records(owner)
	}
	table, ok := v.steerTable()
	if !ok {
		return set.records(owner)
	}
	t, ok := choose(table, qtype, c)
	if !ok {
		return set.records(owner)
	}
	return set.pick(owner, t)
}
