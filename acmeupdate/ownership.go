package acmeupdate

import (
	"strings"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// Authorizer decides whether the keys of namespace may answer the ACME
// challenge of name (at _acme-challenge.<name>) in zone. A refusal says why.
type Authorizer interface {
	MayChallenge(namespace, zone, name string) (ok bool, why string)
}

// ReasonIncomplete: the data the ownership decision reads is not whole yet.
const ReasonIncomplete = "incomplete"

// Completer is an Authorizer that knows whether the data its decisions read
// is whole: every kind and every cluster listed and in contact. While it is
// not, no update is accepted (SERVFAIL, ReasonIncomplete): a name whose
// owner has not been read yet would look free.
type Completer interface {
	Complete() (ok bool, why string)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(namespace, zone, name string) (bool, string)

// MayChallenge implements Authorizer.
func (f AuthorizerFunc) MayChallenge(namespace, zone, name string) (bool, string) {
	return f(namespace, zone, name)
}

// Ownership applies the block's ownership policy to challenges. A challenge
// at _acme-challenge.<name> proves control of <name> and of *.<name>, so
// a namespace may answer it only where it may publish <name> and no other
// namespace owns <name> or a name below it:
//
//   - union: anywhere in the zone (every key may get a certificate for every
//     name: use it only when all keys are trusted alike);
//   - first: when every owner of <name> and of the names below it is the
//     namespace itself (names nobody owns are free);
//   - delegated: inside the namespace's domains, with the rules of first.
//
// The zone apex belongs to the plugin under first and delegated, and the
// nameserver names under every policy: a certificate for the DNS server's
// own name is never a tenant's. The names between a nameserver name and the
// apex are refused under every policy too, as the index reserves them for
// objects; under union the apex stays every key's unless its wildcard covers
// a nameserver name (one label below it). Under first and delegated so are the
// apex of every zone of the block, and the names above one, whichever zone
// the update names: the apex of a nested zone (cluster_zones makes them) is
// a name of the outer zone too.
type Ownership struct {
	Policy index.Policy
	// Zones are the block's zones (canonical), nested ones included.
	Zones []string
	// Nameservers are the nameserver names of the block's zones (canonical).
	Nameservers []string
	// Owners returns the namespaces owning name or a name below it, under the
	// policy ("" for the plugin's own names).
	Owners func(zone, name string) []string
	// MayPublish reports whether namespace may publish name (delegated).
	MayPublish func(namespace, name string) bool
}

// MayChallenge implements Authorizer.
func (o Ownership) MayChallenge(namespace, zone, name string) (bool, string) {
	for _, ns := range o.Nameservers {
		if name == ns {
			return false, "the name of a nameserver of the zone belongs to the DNS server"
		}
		if dns.IsSubDomain(name, ns) && coversNameserver(o.Policy, zone, name, ns) {
			return false, "a challenge at " + name + " covers the nameserver name " + ns + " (or its wildcard does), which belongs to the DNS server"
		}
	}
	if o.Policy == index.Union {
		return true, ""
	}
	if name == zone {
		return false, "the zone apex belongs to the DNS server"
	}
	for _, z := range o.Zones {
		if dns.IsSubDomain(name, z) {
			return false, "the apex of zone " + z + " belongs to the DNS server (a challenge at " + name + " covers it or its wildcard)"
		}
	}
	if o.Policy == index.Delegated && (o.MayPublish == nil || !o.MayPublish(namespace, name)) {
		return false, "outside the domains delegated to namespace " + namespace
	}
	if o.Owners == nil {
		return true, ""
	}
	for _, owner := range o.Owners(zone, name) {
		if owner == "" {
			return false, "the name belongs to the DNS server"
		}
		if owner != namespace {
			return false, "another namespace owns the name or a name below it"
		}
	}
	return true, ""
}

// coversNameserver reports whether a challenge at name, a name above the
// nameserver name ns, is refused: every such name below the zone apex is
// (the index reserves them), and under union the apex only when its
// wildcard covers ns; under first and delegated the apex is refused anyway.
func coversNameserver(policy index.Policy, zone, name, ns string) bool {
	if policy != index.Union || name != zone {
		return true
	}
	_, parent, _ := strings.Cut(ns, ".")
	return parent == name
}
