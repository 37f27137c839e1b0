package index

import (
	"fmt"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// Policy decides which namespaces may publish at a name.
type Policy int

const (
	// Union unites the claims of every object on a name.
	Union Policy = iota
	// First gives a name to the namespace whose object claimed it first (see
	// Claim.before); claims from other namespaces are rejected.
	First
	// Delegated lets a namespace publish only at or below the domains delegated
	// to it (see Index.SetDomains), with the rules of First inside them.
	Delegated
)

// ParsePolicy returns the policy named s: union, first or delegated.
func ParsePolicy(s string) (Policy, bool) {
	switch s {
	case "union":
		return Union, true
	case "first":
		return First, true
	case "delegated":
		return Delegated, true
	}
	return Union, false
}

func (p Policy) String() string {
	switch p {
	case First:
		return "first"
	case Delegated:
		return "delegated"
	}
	return "union"
}

// Claim says who publishes an object's records. The zero Claim is the
// plugin's own (the nameservers' records): it is never rejected.
type Claim struct {
	// Namespace is the tenant the object belongs to.
	Namespace string
	// Created orders claims: the object's creation time (Unix nanoseconds).
	Created int64
	// Unhealthy marks records whose targets cannot serve (see health.go):
	// dropped at a name while another contribution there is healthy.
	Unhealthy bool
	// Priority of the object's cluster: at a name, only the healthy
	// contributions of the lowest priority answer (0 unless set).
	Priority int32
	// Weight of the object's targets in the weighted choice at a steered
	// name (steer.go); 0 is unset and counts as 1.
	Weight uint32
	// Location of the object's targets, for the choice by the client's
	// location (steer.go); zero when unset.
	Location Location
}

// Reasons a claim is rejected, as the rejected metric and logs name them.
const (
	// ReasonReserved: the zone apex, a nameserver name, or a wildcard that covers them.
	ReasonReserved = "reserved"
	// ReasonOwned: another namespace claimed the name first.
	ReasonOwned = "owned"
	// ReasonUndelegated: the name is outside the namespace's delegated domains.
	ReasonUndelegated = "undelegated"
)

// Rejection is one object's claim on one name that the policy turned down.
type Rejection struct {
	Zone, Name string
	Key        string // the rejected object
	Reason     string
	// Owner is the namespace that owns the name (ReasonOwned), else empty.
	Owner string
}

func (r Rejection) String() string {
	switch r.Reason {
	case ReasonOwned:
		return fmt.Sprintf("%s: claim of %s rejected: the name belongs to namespace %s", r.Name, r.Key, r.Owner)
	case ReasonUndelegated:
		return fmt.Sprintf("%s: claim of %s rejected: outside the domains delegated to its namespace", r.Name, r.Key)
	}
	return fmt.Sprintf("%s: claim of %s rejected: the zone apex and the nameserver names belong to the plugin", r.Name, r.Key)
}

// RejectionListener is a Listener that also hears of rejected claims. Each
// rejection is reported once, when it starts or its reason changes.
type RejectionListener interface {
	Rejected(Rejection)
}

// Conflict is a merge conflict at a name with the objects that publish there.
type Conflict struct {
	Name, Message string
	Keys          []string // the objects whose records were merged, by key
	Namespaces    []string // the namespace of each ("" for the plugin's own)
}

// ConflictListener is a Listener that also hears which objects take part in
// a conflict, after each Conflict call.
type ConflictListener interface {
	Conflicted(Conflict)
}

// plugin reports whether the claim is the plugin's own.
func (c Claim) plugin() bool { return c.Namespace == "" }

// Plugin reports whether the claim is the plugin's own.
func (c Claim) Plugin() bool { return c.plugin() }

// before orders claims: by creation time, then by object key.
func before(a, b contribution) bool {
	if a.claim.Created != b.claim.Created {
		return a.claim.Created < b.claim.Created
	}
	return a.key < b.key
}

// admitted returns the contributions at name that the policy accepts, and the
// rejected ones. cs is ordered by key; so is the result, which is cs itself
// when nothing is rejected (the common case, without allocating).
func (ix *Index) admitted(name string, zi int, cs []contribution) (ok []contribution, rejected []Rejection) {
	if ix.policy == Union || len(cs) == 0 {
		return cs, nil
	}
	reserved := ix.reserved(name, zi)
	owner := -1
	for i := range cs {
		if ix.refusal(name, reserved, cs[i].claim) == "" && !cs[i].claim.plugin() && (owner < 0 || before(cs[i], cs[owner])) {
			owner = i
		}
	}
	verdict := func(c contribution) (reason, ownerNS string) {
		if reason := ix.refusal(name, reserved, c.claim); reason != "" {
			return reason, ""
		}
		if c.claim.plugin() || owner < 0 || c.claim.Namespace == cs[owner].claim.Namespace {
			return "", ""
		}
		return ReasonOwned, cs[owner].claim.Namespace
	}
	all := true
	for _, c := range cs {
		if r, _ := verdict(c); r != "" {
			all = false
			break
		}
	}
	if all {
		return cs, nil
	}
	zone := ix.zones[zi]
	for _, c := range cs {
		if r, o := verdict(c); r != "" {
			rejected = append(rejected, Rejection{Zone: zone, Name: name, Key: c.key, Reason: r, Owner: o})
		} else {
			ok = append(ok, c)
		}
	}
	return ok, rejected
}

// refusal returns why the policy refuses claim at name whoever else claims
// it (ReasonReserved, ReasonUndelegated), or "".
func (ix *Index) refusal(name string, reserved bool, claim Claim) string {
	switch {
	case claim.plugin():
		return ""
	case reserved:
		return ReasonReserved
	case ix.policy == Delegated && !ix.delegated(claim.Namespace, name):
		return ReasonUndelegated
	}
	return ""
}

// reserved reports whether name belongs to the plugin: the zone apex, a
// nameserver name, or a wildcard whose parent is the apex or an ancestor of a
// nameserver name (RFC 4592: it would answer for them).
func (ix *Index) reserved(name string, zi int) bool {
	zone := ix.zones[zi]
	if name == zone || slices.Contains(ix.nsNames, name) {
		return true
	}
	if !isWildcard(name) {
		return false
	}
	parent := name[2:]
	if parent == zone {
		return true
	}
	for _, ns := range ix.nsNames {
		if dns.IsSubDomain(parent, ns) {
			return true
		}
	}
	return false
}

// delegated reports whether name is at or below a domain of namespace.
func (ix *Index) delegated(namespace, name string) bool {
	for _, d := range ix.staticDomains[namespace] {
		if dns.IsSubDomain(d, name) {
			return true
		}
	}
	for _, d := range ix.domains[namespace] {
		if dns.IsSubDomain(d, name) {
			return true
		}
	}
	return false
}

// SetDomains sets the domains delegated to namespace at run time (from its
// Namespace object), in addition to those of Config.Domains, and re-applies
// the policy to the names that namespace claims. Domains are lower-cased and
// fully qualified; nil removes them.
func (ix *Index) SetDomains(namespace string, domains []string) {
	ix.mu.Lock()
	if slices.Equal(ix.domains[namespace], domains) {
		ix.mu.Unlock()
		return
	}
	if len(domains) == 0 {
		delete(ix.domains, namespace)
	} else {
		ix.domains[namespace] = slices.Clone(domains)
	}
	if ix.policy != Delegated {
		ix.mu.Unlock()
		return
	}
	var names []string
	ix.eachObject(func(id objectID, wire []byte) {
		if ix.claimOf(id).Namespace == namespace {
			forWireNames(wire, func(name string) { names = append(names, name) })
		}
	})
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		ix.rebuild(name)
	}
	notify := ix.publishLocked(false)
	ix.mu.Unlock()
	ix.announce(notify)
}

// reportRejections tells the listener of rejections at name that are new or
// changed, and forgets those that ended.
func (ix *Index) reportRejections(name string, rejected []Rejection) {
	old := ix.rejections[name]
	if len(rejected) == 0 {
		delete(ix.rejections, name)
	} else {
		ix.rejections[name] = rejected
	}
	rl, _ := ix.listener.(RejectionListener)
	if rl == nil || !ix.live {
		return // the first Flush reports what is rejected then
	}
	for _, r := range rejected {
		if !slices.Contains(old, r) {
			rl.Rejected(r)
		}
	}
}

// rejectionsNow returns the claims the policy currently rejects, ordered by name and key.
func (ix *Index) rejectionsNow() []Rejection {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.rejectionsLocked()
}

func (ix *Index) rejectionsLocked() []Rejection {
	var out []Rejection
	for _, rs := range ix.rejections {
		out = append(out, rs...)
	}
	slices.SortFunc(out, func(a, b Rejection) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out
}
