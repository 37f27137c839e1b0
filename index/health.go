package index

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// Health and priority at a name.
//
// Every object's claim says whether its targets can serve (Claim.Unhealthy)
// and the priority of its cluster (Claim.Priority, lower first). When a name
// is rebuilt, chooseHealthy keeps, of the target records (A, AAAA, CNAME)
// that the ownership policy admitted, those of the healthy contributions of
// the lowest priority among the healthy, for each address type apart (a
// CNAME counts for both). The other types (TXT, MX, CAA, ...) and the
// plugin's own records always stay. When no contribution with records of
// an address type is healthy, all of them answer it: health never turns a
// name into NXDOMAIN or NODATA (fail open, as Route 53 does when every
// record of a name is unhealthy).
//
// The choice is made when the name's node is built, not at query time: the
// query path reads the chosen records as it reads any others, and a health
// flip costs one rebuild of the object's names.

// ZoneHealth counts, in one zone, what chooseHealthy decided.
type ZoneHealth struct {
	// Unhealthy is the number of unhealthy contributions (an object's
	// records at one name), withdrawn or answered fail-open.
	Unhealthy int
	// FailOpen is the number of names whose every contribution is
	// unhealthy, answered with all of them.
	FailOpen int
	// Standby is the number of names answered by contributions whose
	// priority is not the best published there: the better ones are unhealthy.
	Standby int
}

// HealthListener is a Listener that also hears of health decisions. Its
// methods are called while the index's lock is held, like Conflict: they
// must return quickly and not call back into the index.
type HealthListener interface {
	// HealthChanged is called with the new counts of zone when they change.
	HealthChanged(zone string, h ZoneHealth)
	// FailOpen is called when name starts (open) or stops being answered
	// fail-open.
	FailOpen(zone, name string, open bool)
}

// nameHealth is what chooseHealthy decided at one name; the zero value for
// most names, which are not kept.
type nameHealth struct {
	unhealthy int
	failOpen  bool
	standby   bool
}

// chooseHealthy returns the contributions of cs that answer at name, and
// records the decision. cs itself is returned when every contribution
// answers (the common case, without allocating).
func (r *rules) chooseHealthy(name string, zi int, cs []contribution) []contribution {
	out, st := chooseContributions(cs, r.down)
	r.setHealth(name, zi, st)
	return out
}

// chooseContributions applies the rule of the file's comment; the objects
// whose keys start with one of down are unhealthy too. The choice is made
// among the target records (A, AAAA, CNAME) only, once per address type (a
// CNAME is a candidate for both): the other types of every contribution
// always stay, so a TXT, MX or CAA never withdraws or hides a target, and an
// address type that only unhealthy objects publish fails open on its own.
func chooseContributions(cs []contribution, down []string) ([]contribution, nameHealth) {
	unhealthy := func(c contribution) bool {
		return c.claim.Unhealthy || len(down) > 0 && slices.ContainsFunc(down, func(p string) bool { return strings.HasPrefix(c.key, p) })
	}
	if !mustChoose(cs, unhealthy) {
		return cs, nameHealth{}
	}
	var st nameHealth
	sick := make([]bool, len(cs))
	for i, c := range cs {
		if !c.claim.plugin() && hasTarget(c.rrs, 0) && unhealthy(c) {
			sick[i] = true
			st.unhealthy++
		}
	}
	// keep[i] has bit f set when contribution i answers address type f.
	keep := make([]uint8, len(cs))
	var ts []target
	var idx []int
	for f, qtype := range addressTypes {
		ts, idx = ts[:0], idx[:0]
		for i, c := range cs {
			if !c.claim.plugin() && hasTarget(c.rrs, qtype) {
				ts = append(ts, target{priority: c.claim.Priority, healthy: !sick[i]})
				idx = append(idx, i)
			}
		}
		keeps := make([]bool, len(ts))
		failOpen, standby := chooseTargets(ts, keeps)
		st.failOpen = st.failOpen || failOpen
		st.standby = st.standby || standby
		for j, k := range keeps {
			if k {
				keep[idx[j]] |= 1 << f
			}
		}
	}
	out := make([]contribution, 0, len(cs))
	for i, c := range cs {
		if !c.claim.plugin() {
			c.rrs = keepTargets(c.rrs, keep[i])
		}
		if len(c.rrs) > 0 {
			out = append(out, c)
		}
	}
	return out, st
}

// addressTypes are the types a target choice is made for; a CNAME is a
// candidate for each of them.
var addressTypes = [...]uint16{dns.TypeA, dns.TypeAAAA}

// target is one candidate of a choice: a contribution with records of the
// address type (or a CNAME) at the name.
type target struct {
	priority int32
	healthy  bool
}

// chooseTargets sets keep[i] for the targets that answer: the healthy ones
// of the best (lowest) priority among the healthy, or every one when none is
// healthy (failOpen). standby says the answer is not of the best priority
// published. Steps that narrow the choice further come after these two.
func chooseTargets(ts []target, keep []bool) (failOpen, standby bool) {
	if len(ts) == 0 {
		return false, false
	}
	healthy, best, lowest := 0, int32(0), ts[0].priority
	for _, t := range ts {
		lowest = min(lowest, t.priority)
		if t.healthy {
			if healthy == 0 || t.priority < best {
				best = t.priority
			}
			healthy++
		}
	}
	for i, t := range ts {
		keep[i] = healthy == 0 || t.healthy && t.priority == best
	}
	return healthy == 0, healthy > 0 && best > lowest
}

// mustChoose says whether a choice can drop anything at the name: a
// contribution with targets is unhealthy, or their priorities differ.
func mustChoose(cs []contribution, unhealthy func(contribution) bool) bool {
	seen, first := false, int32(0)
	for _, c := range cs {
		if c.claim.plugin() || !hasTarget(c.rrs, 0) {
			continue
		}
		if unhealthy(c) || seen && c.claim.Priority != first {
			return true
		}
		seen, first = true, c.claim.Priority
	}
	return false
}

// hasTarget says whether rrs hold a record of qtype or a CNAME; with qtype
// 0, a record of any target type.
func hasTarget(rrs []dns.RR, qtype uint16) bool {
	for _, rr := range rrs {
		t := rr.Header().Rrtype
		if t == dns.TypeCNAME || t == qtype || qtype == 0 && isAddress(t) {
			return true
		}
	}
	return false
}

func isAddress(t uint16) bool { return t == dns.TypeA || t == dns.TypeAAAA }

// keepTargets returns rrs without the target records that keep (a bit per
// address type) does not answer; a CNAME stays when any bit is set. rrs
// itself is returned when nothing is dropped.
func keepTargets(rrs []dns.RR, keep uint8) []dns.RR {
	kept := func(t uint16) bool {
		switch t {
		case dns.TypeCNAME:
			return keep != 0
		case dns.TypeA:
			return keep&1 != 0
		case dns.TypeAAAA:
			return keep&2 != 0
		}
		return true
	}
	n := 0
	for _, rr := range rrs {
		if kept(rr.Header().Rrtype) {
			n++
		}
	}
	if n == len(rrs) {
		return rrs
	}
	out := make([]dns.RR, 0, n)
	for _, rr := range rrs {
		if kept(rr.Header().Rrtype) {
			out = append(out, rr)
		}
	}
	return out
}

// setHealth records the decision st at name and tells the listener of what
// changed.
func (r *rules) setHealth(name string, zi int, st nameHealth) {
	old := r.health[name]
	if old == st {
		return
	}
	if st == (nameHealth{}) {
		delete(r.health, name)
	} else {
		r.health[name] = st
	}
	zh := &r.zoneHealth[zi]
	zh.Unhealthy += st.unhealthy - old.unhealthy
	zh.FailOpen += b2i(st.failOpen) - b2i(old.failOpen)
	zh.Standby += b2i(st.standby) - b2i(old.standby)
	hl, ok := r.listener.(HealthListener)
	if !ok {
		return
	}
	if st.failOpen != old.failOpen {
		hl.FailOpen(r.zones[zi], name, st.failOpen)
	}
	hl.HealthChanged(r.zones[zi], *zh)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// setDown marks the key prefix as down or no longer, and reports whether
// that changed.
func (r *rules) setDown(prefix string, down bool) bool {
	i := slices.Index(r.down, prefix)
	if down == (i >= 0) {
		return false
	}
	if down {
		r.down = append(r.down, prefix)
	} else {
		r.down = slices.Delete(r.down, i, i+1)
	}
	return true
}

// Health returns the counts of zone (see ZoneHealth).
func (ix *Index) Health(zone string) ZoneHealth {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if zi := slices.Index(ix.zones, zone); zi >= 0 {
		return ix.rules.zoneHealth[zi]
	}
	return ZoneHealth{}
}

// SetDown marks the objects whose keys start with prefix (a cluster's) as
// unhealthy, or no longer, whatever their claims say, and rebuilds their
// names: a cluster whose API server has been silent too long (fleet's
// failover) stops answering where another has a healthy target.
func (ix *Index) SetDown(prefix string, down bool) {
	ix.rebuildWhere(func() bool { return ix.rules.setDown(prefix, down) },
		func(id objectID) bool { return strings.HasPrefix(ix.objects.key(id), prefix) })
}
