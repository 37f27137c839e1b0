package index

import "github.com/miekg/dns"

// rrset is the records of one type at one owner name.
type rrset struct {
	qtype uint16
	rrs   []dns.RR
}

// node is one name of a zone as the writer sees it: its RRsets, ordered by
// type, and whether a wildcard sits right below it. A snapshot keeps nodes
// packed (see packed.go); the writer builds the changed ones as nodes.
// An empty non-terminal (a name that exists only because names below it
// do) has no sets.
type node struct {
	name     string
	sets     []rrset
	wildcard bool          // "*.<name>" exists
	steer    []steerTarget // the targets of a steered name (steer.go), or nil
}

// rrs returns the records of type qtype, or nil.
func (n *node) rrs(qtype uint16) []dns.RR {
	for i := range n.sets {
		if n.sets[i].qtype == qtype {
			return n.sets[i].rrs
		}
	}
	return nil
}

// empty reports whether n is an empty non-terminal.
func (n *node) empty() bool { return len(n.sets) == 0 }
