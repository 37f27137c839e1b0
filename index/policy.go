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
	// ClusterWeight and ClusterLocation are the weight and location of the
	// object's cluster alone (the Corefile's), without the object's own
	// annotations: they steer its targets instead of Weight and Location
	// at a name that several tenants publish (Claim.steering).
	ClusterWeight   uint32
	ClusterLocation Location
}

// Reasons a claim is rejected, as the rejected metric and logs name them.
const (
	// ReasonReserved: the zone apex, a nameserver name, or a wildcard that covers them.
	ReasonReserved = "reserved"
	// ReasonOwned: another namespace claimed the name first.
	ReasonOwned = "owned"
	// ReasonUndelegated: the name is outside the namespace's delegated domains.
	ReasonUndelegated = "undelegated"
	// ReasonQuota: the object's records do not fit in its namespace's quota
	// (Config.Quota); it publishes nothing (quota.go).
	ReasonQuota = "quota"
)

// Rejection is one object's claim on one name that the policy turned down.
type Rejection struct {
	Zone, Name string
	Key        string // the rejected object
	Reason     string
	// Owner is the namespace that owns the name (ReasonOwned), else empty.
	Owner string
	// Records and Quota (ReasonQuota): the object's records, at its
	// first name, and its namespace's quota.
	Records, Quota int
}

func (r Rejection) String() string {
	switch r.Reason {
	case ReasonOwned:
		return fmt.Sprintf("%s: claim of %s rejected: the name belongs to namespace %s", r.Name, r.Key, r.Owner)
	case ReasonUndelegated:
		return fmt.Sprintf("%s: claim of %s rejected: outside the domains delegated to its namespace", r.Name, r.Key)
	case ReasonQuota:
		return fmt.Sprintf("%s: claim of %s rejected: its %d records do not fit in what the older objects of its namespace leave of its quota of %d records; it publishes nothing", r.Name, r.Key, r.Records, r.Quota)
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

// rules decides which contributions answer at a name, and tells the
// listener of its decisions: the ownership policy (this file: which
// namespaces may publish, and the claims it rejects), health and priority
// (health.go), and the merge's conflicts. Steering (steer.go) then packs a
// table of targets from what is left.
type rules struct {
	zones         []string
	listener      Listener
	policy        Policy
	nsNames       []string               // the nameserver names, reserved to the plugin
	nsIn          [][]string             // per zone: the nameserver names below its apex, in it
	nsMissing     []bool                 // per zone, under Union: one of nsIn has no node (see nameservers.go)
	staticDomains map[string][]string    // namespace → domains from the configuration
	domains       map[string][]string    // namespace → domains set at run time
	rejections    map[string][]Rejection // owner name → claims rejected there
	conflicts     map[string]string      // owner name → last conflict told
	health        map[string]nameHealth  // owner name → its health decision, when not the zero one
	zoneHealth    []ZoneHealth           // per zone: the sums of health
	down          []string               // key prefixes of the objects counted unhealthy (SetDown)
}

func newRules(cfg Config, ns [][]dns.RR) rules {
	r := rules{
		zones:         cfg.Zones,
		listener:      cfg.Listener,
		policy:        cfg.Policy,
		staticDomains: cfg.Domains,
		domains:       map[string][]string{},
		rejections:    map[string][]Rejection{},
		conflicts:     map[string]string{},
		health:        map[string]nameHealth{},
		zoneHealth:    make([]ZoneHealth, len(cfg.Zones)),
	}
	for _, rrs := range ns {
		for _, rr := range rrs {
			if n, ok := rr.(*dns.NS); ok && !slices.Contains(r.nsNames, strings.ToLower(n.Ns)) {
				r.nsNames = append(r.nsNames, strings.ToLower(n.Ns))
			}
		}
	}
	r.nsIn = make([][]string, len(cfg.Zones))
	r.nsMissing = make([]bool, len(cfg.Zones))
	for _, n := range r.nsNames {
		if zi := ZoneOf(cfg.Zones, n); zi >= 0 && n != cfg.Zones[zi] {
			r.nsIn[zi] = append(r.nsIn[zi], n)
			r.nsMissing[zi] = r.policy == Union // no node yet
		}
	}
	return r
}

// admit returns the contributions at name that the policy accepts, and
// tells the listener of the rejections that are new when live. cs is
// ordered by key; so is the result, which is cs itself when nothing is
// rejected (the common case, without allocating).
func (r *rules) admit(name string, zi int, cs []contribution, live bool) []contribution {
	ok, rejected := r.admitted(name, zi, cs)
	r.reportRejections(name, rejected, live)
	return ok
}

// admitted returns the contributions at name that the policy accepts, and the
// rejected ones.
func (r *rules) admitted(name string, zi int, cs []contribution) (ok []contribution, rejected []Rejection) {
	if len(cs) == 0 {
		return cs, nil
	}
	reserved := r.reserved(name, zi)
	if r.policy == Union && !reserved {
		return cs, nil
	}
	owner := -1
	for i := range cs {
		if r.refusal(name, reserved, cs[i].claim) == "" && !cs[i].claim.plugin() && (owner < 0 || before(cs[i], cs[owner])) {
			owner = i
		}
	}
	verdict := func(c contribution) (reason, ownerNS string) {
		if reason := r.refusal(name, reserved, c.claim); reason != "" {
			return reason, ""
		}
		if c.claim.plugin() || owner < 0 || c.claim.Namespace == cs[owner].claim.Namespace {
			return "", ""
		}
		return ReasonOwned, cs[owner].claim.Namespace
	}
	all := true
	for _, c := range cs {
		if reason, _ := verdict(c); reason != "" {
			all = false
			break
		}
	}
	if all {
		return cs, nil
	}
	zone := r.zones[zi]
	for _, c := range cs {
		if reason, o := verdict(c); reason != "" {
			rejected = append(rejected, Rejection{Zone: zone, Name: name, Key: c.key, Reason: reason, Owner: o})
		} else {
			ok = append(ok, c)
		}
	}
	return ok, rejected
}

// refusal returns why the policy refuses claim at name whoever else claims
// it (ReasonReserved, ReasonUndelegated), or "".
func (r *rules) refusal(name string, reserved bool, claim Claim) string {
	switch {
	case claim.plugin():
		return ""
	case reserved:
		return ReasonReserved
	case r.policy == Delegated && !r.delegated(claim.Namespace, name):
		return ReasonUndelegated
	}
	return ""
}

// reserved reports whether name belongs to the plugin under the policy:
// under every policy, a nameserver name and the names between it and the
// apex of its zone (a delegation there would take the nameserver away), and
// a wildcard whose parent is one of those (RFC 4592: it would answer for
// them); under First and Delegated also the zone apex and the wildcard
// below it. Under Union the apex and its wildcard are the tenants' (the
// policy trusts them with every name), but for the wildcard while a
// nameserver name of the zone has no node, which it would answer for.
func (r *rules) reserved(name string, zi int) bool {
	zone := r.zones[zi]
	if name == zone {
		return r.policy != Union
	}
	if !isWildcard(name) {
		return r.nameserverOrAbove(name, zi)
	}
	parent := name[2:]
	if parent == zone {
		return r.policy != Union || r.nsMissing[zi]
	}
	return r.nameserverOrAbove(parent, zi)
}

// nameserverOrAbove reports whether name, in zone zi and below its apex, is
// a nameserver name or one of the names between one and the apex.
func (r *rules) nameserverOrAbove(name string, zi int) bool {
	return slices.ContainsFunc(r.nsIn[zi], func(ns string) bool { return inZone(ns, name) })
}

// delegated reports whether name is at or below a domain of namespace.
func (r *rules) delegated(namespace, name string) bool {
	for _, ds := range [...][]string{r.staticDomains[namespace], r.domains[namespace]} {
		for _, d := range ds {
			if inZone(name, d) {
				return true
			}
		}
	}
	return false
}

// setDomains sets the domains delegated to namespace at run time and
// reports whether the policy's verdicts may change.
func (r *rules) setDomains(namespace string, domains []string) bool {
	if slices.Equal(r.domains[namespace], domains) {
		return false
	}
	if len(domains) == 0 {
		delete(r.domains, namespace)
	} else {
		r.domains[namespace] = slices.Clone(domains)
	}
	return r.policy == Delegated
}

// SetDomains sets the domains delegated to namespace at run time (from its
// Namespace object), in addition to those of Config.Domains, and re-applies
// the policy to the names that namespace claims. Domains are lower-cased and
// fully qualified; nil removes them.
func (ix *Index) SetDomains(namespace string, domains []string) {
	ix.rebuildWhere(func() bool { return ix.rules.setDomains(namespace, domains) },
		func(id objectID) bool { return ix.objects.claim(id).Namespace == namespace })
}

// rejected reports whether the policy rejects the claim of the object key
// at name.
func (r *rules) rejected(name, key string) bool {
	return slices.ContainsFunc(r.rejections[name], func(rj Rejection) bool { return rj.Key == key })
}

// reportRejections tells the listener of rejections at name that are new or
// changed, when live, and forgets those that ended.
func (r *rules) reportRejections(name string, rejected []Rejection, live bool) {
	old := r.rejections[name]
	if len(rejected) == 0 {
		delete(r.rejections, name)
	} else {
		r.rejections[name] = rejected
	}
	rl, _ := r.listener.(RejectionListener)
	if rl == nil || !live {
		return // the first Flush reports what is rejected then
	}
	for _, rj := range rejected {
		if !slices.Contains(old, rj) {
			rl.Rejected(rj)
		}
	}
}

// rejectionsNow returns the claims the policy currently rejects, ordered by
// name and key.
func (r *rules) rejectionsNow() []Rejection {
	var out []Rejection
	for _, rs := range r.rejections {
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

// reportConflict tells the listener of the merge's conflict at name when
// it is new, and forgets one that ended.
func (r *rules) reportConflict(name, conflict string, contributors []contribution) {
	if conflict == "" {
		delete(r.conflicts, name)
		return
	}
	if r.conflicts[name] == conflict {
		return
	}
	r.conflicts[name] = conflict
	if r.listener != nil {
		r.listener.Conflict(name, conflict)
	}
	if cl, ok := r.listener.(ConflictListener); ok {
		c := Conflict{Name: name, Message: conflict}
		for _, ct := range contributors {
			c.Keys = append(c.Keys, ct.key)
			c.Namespaces = append(c.Namespaces, ct.claim.Namespace)
		}
		cl.Conflicted(c)
	}
}
