package index

import "github.com/miekg/dns"

// rrset is the records of one type at one owner name.
type rrset struct {
	qtype uint16
	rrs   []dns.RR
}

// node is one name of a zone as the query path sees it. Nodes are immutable
// once published in a snapshot; the index replaces them instead of changing them.
type node struct {
	name string
	// sets holds the RRsets at this name, ordered by type. An empty non-terminal
	// (a name that exists only because names below it do) has none.
	sets []rrset
	// wildcard is the node of "*.<name>", when it exists.
	wildcard *node
	// one holds sets when there is a single RRset, as at most names: one
	// allocation per node, and one cache line less per query.
	one [1]rrset
}

// newNode returns the node of name with sets (ordered by type) and wildcard.
func newNode(name string, sets []rrset, wildcard *node) *node {
	n := &node{name: name, wildcard: wildcard}
	if len(sets) == 1 {
		n.one[0] = sets[0]
		n.sets = n.one[:1:1]
	} else {
		n.sets = sets
	}
	return n
}

// rrs returns the records of type qtype, or nil. The returned slice has
// len == cap so that appending to it never writes into the snapshot.
func (n *node) rrs(qtype uint16) []dns.RR {
	for i := range n.sets {
		if n.sets[i].qtype == qtype {
			rrs := n.sets[i].rrs
			return rrs[:len(rrs):len(rrs)]
		}
	}
	return nil
}

// cname returns the CNAME record of the node, or nil.
func (n *node) cname() *dns.CNAME {
	if rrs := n.rrs(dns.TypeCNAME); len(rrs) > 0 {
		return rrs[0].(*dns.CNAME)
	}
	return nil
}

// empty reports whether n is an empty non-terminal.
func (n *node) empty() bool { return len(n.sets) == 0 }
