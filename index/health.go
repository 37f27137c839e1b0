package index

import (
	"slices"
	"strings"
)

// Health and priority at a name.
//
// Every object's claim says whether its targets can serve (Claim.Unhealthy)
// and the priority of its cluster (Claim.Priority, lower first). When a name
// is rebuilt, chooseHealthy keeps, of the contributions the ownership policy
// admitted, the healthy ones of the lowest priority among the healthy; the
// plugin's own records always stay. When no contribution is healthy, all of
// them answer: health never turns a name into NXDOMAIN or NODATA (fail
// open, as Route 53 does when every record of a name is unhealthy).
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
func (ix *Index) chooseHealthy(name string, zi int, cs []contribution) []contribution {
	out, st := chooseContributions(cs, ix.down)
	ix.setHealth(name, zi, st)
	return out
}

// chooseContributions applies the rule of the file's comment; the objects
// whose keys start with one of down are unhealthy too.
func chooseContributions(cs []contribution, down []string) ([]contribution, nameHealth) {
	unhealthy := func(c contribution) bool {
		return c.claim.Unhealthy || len(down) > 0 && slices.ContainsFunc(down, func(p string) bool { return strings.HasPrefix(c.key, p) })
	}
	var st nameHealth
	seen, healthy, best, lowest, mixed := 0, 0, int32(0), int32(0), false
	for _, c := range cs {
		if c.claim.plugin() {
			continue
		}
		p := c.claim.Priority
		if seen > 0 && p != lowest {
			mixed = true
		}
		if seen == 0 || p < lowest {
			lowest = p
		}
		seen++
		if unhealthy(c) {
			st.unhealthy++
			continue
		}
		if healthy == 0 || p < best {
			best = p
		}
		healthy++
	}
	switch {
	case st.unhealthy == 0 && !mixed:
		return cs, st
	case healthy == 0:
		st.failOpen = true
		return cs, st
	}
	out := make([]contribution, 0, len(cs))
	for _, c := range cs {
		if c.claim.plugin() || !unhealthy(c) && c.claim.Priority == best {
			out = append(out, c)
		}
	}
	st.standby = best > lowest
	return out, st
}

// setHealth records the decision st at name and tells the listener of what
// changed.
func (ix *Index) setHealth(name string, zi int, st nameHealth) {
	old := ix.health[name]
	if old == st {
		return
	}
	if st == (nameHealth{}) {
		delete(ix.health, name)
	} else {
		ix.health[name] = st
	}
	zh := &ix.zoneHealth[zi]
	zh.Unhealthy += st.unhealthy - old.unhealthy
	zh.FailOpen += b2i(st.failOpen) - b2i(old.failOpen)
	zh.Standby += b2i(st.standby) - b2i(old.standby)
	hl, ok := ix.listener.(HealthListener)
	if !ok {
		return
	}
	if st.failOpen != old.failOpen {
		hl.FailOpen(ix.zones[zi], name, st.failOpen)
	}
	hl.HealthChanged(ix.zones[zi], *zh)
}

// Health returns the counts of zone (see ZoneHealth).
func (ix *Index) Health(zone string) ZoneHealth {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for zi, z := range ix.zones {
		if z == zone {
			return ix.zoneHealth[zi]
		}
	}
	return ZoneHealth{}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SetDown marks the objects whose keys start with prefix (a cluster's) as
// unhealthy, or no longer, whatever their claims say, and rebuilds their
// names: a cluster whose API server has been silent too long (fleet's
// failover) stops answering where another has a healthy target.
func (ix *Index) SetDown(prefix string, down bool) {
	ix.mu.Lock()
	i := slices.Index(ix.down, prefix)
	if down == (i >= 0) {
		ix.mu.Unlock()
		return
	}
	if down {
		ix.down = append(ix.down, prefix)
	} else {
		ix.down = slices.Delete(ix.down, i, i+1)
	}
	var names []string
	for key, id := range ix.objects {
		if strings.HasPrefix(key, prefix) {
			forWireNames(ix.objs[id].wire, func(name string) { names = append(names, name) })
		}
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		ix.rebuild(name)
	}
	notify := ix.publishLocked(false)
	ix.mu.Unlock()
	ix.announce(notify)
}
