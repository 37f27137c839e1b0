package index

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// Snapshot is an immutable view of every zone of an index. The query path
// loads it with one atomic read and never takes a lock.
type Snapshot struct {
	names     table       // every name, empty non-terminals included: those of bit
	bit       ref         // the view's bit in names (see tables.go)
	len       int         // the view's names
	zoneNames []string    // the index's zones, shared and never changed
	parents   []int       // per zone, the zone it is nested in, or -1; shared
	zones     []zoneState // in the order of zoneNames
	cuts      bool        // some name below an apex has NS records (a delegation)
}

// zoneState is the per-zone part of a snapshot.
type zoneState struct {
	name   string
	serial uint32
	soa    []dns.RR // the zone's SOA record, ready for a message section
	ns     []dns.RR // the apex NS RRset, the same in every snapshot
}

// get returns the node of name, unpacked, or nil when the name does not
// exist. It is the writer's way to the published data; the query path reads
// views.
func (s *Snapshot) get(name string) *node {
	if v, ok := s.names.get(name, s.bit); ok {
		return v.node()
	}
	return nil
}

// Zones returns the zones of the snapshot, in the order the index was given
// them. The slice must not be changed.
func (s *Snapshot) Zones() []string { return s.zoneNames }

// Zone returns the position of the most specific zone that contains name, or -1.
func (s *Snapshot) Zone(name string) int { return ZoneOf(s.zoneNames, name) }

// Serial returns the SOA serial of zone zi.
func (s *Snapshot) Serial(zi int) uint32 { return s.zones[zi].serial }

// SOA returns the SOA record of zone zi as a message section.
func (s *Snapshot) SOA(zi int) []dns.RR { return s.zones[zi].soa }

// NS returns the apex NS RRset of zone zi.
func (s *Snapshot) NS(zi int) []dns.RR { return s.zones[zi].ns }

// Has reports whether name exists in the snapshot (as a name with data or an
// empty non-terminal).
func (s *Snapshot) Has(name string) bool {
	_, ok := s.names.get(name, s.bit)
	return ok
}

// Len returns the number of names in the snapshot, empty non-terminals included.
func (s *Snapshot) Len() int { return s.len }

// Records returns every record of zone zi but the apex SOA and NS, ordered
// by name (RFC 4034 §6.1) and type: the body of a zone transfer. The zones
// nested in zi are delegations there: their NS RRsets, with the addresses
// of the nameserver names below the cut as glue.
func (s *Snapshot) Records(zi int) []dns.RR {
	var nodes []*node
	s.names.each(s.bit, func(v view) {
		if !v.empty() && ZoneOf(s.zoneNames, string(v.name())) == zi {
			nodes = append(nodes, v.node())
		}
	})
	nodes = append(nodes, s.delegations(zi)...)
	// RFC 4034 §6.1 order, label by label from the right, by a key made
	// once per name rather than by splitting names in every comparison.
	keyed := make([]keyedNode, len(nodes))
	size := 0
	for i, n := range nodes {
		keyed[i] = keyedNode{canonicalKey(n.name), n}
		for _, set := range n.sets {
			size += len(set.rrs)
		}
	}
	slices.SortFunc(keyed, func(a, b keyedNode) int { return strings.Compare(a.key, b.key) })
	rrs := make([]dns.RR, 0, size)
	for _, k := range keyed {
		for _, set := range k.n.sets {
			rrs = append(rrs, set.rrs...)
		}
	}
	return rrs
}

// keyedNode is a node with its canonicalKey.
type keyedNode struct {
	key string
	n   *node
}

// canonicalKey returns a key whose byte order is the canonical order of
// names (RFC 4034 §6.1): the labels from the right, each followed by a zero byte, which sorts before
// every byte of a label.
func canonicalKey(name string) string {
	labels := dns.SplitDomainName(name)
	var b strings.Builder
	b.Grow(len(name) + 1)
	for i := len(labels) - 1; i >= 0; i-- {
		b.WriteString(labels[i])
		b.WriteByte(0)
	}
	return b.String()
}

// delegations returns the NS RRsets of the zones nested in zi, at their
// apexes, and the glue of their nameserver names below the cut.
func (s *Snapshot) delegations(zi int) []*node {
	var nodes []*node
	seen := map[string]bool{}
	for ci, p := range s.parents {
		if p != zi {
			continue
		}
		child := &s.zones[ci]
		nodes = append(nodes, &node{name: child.name, sets: []rrset{{qtype: dns.TypeNS, rrs: child.ns}}})
		for _, rr := range child.ns {
			target := dns.CanonicalName(rr.(*dns.NS).Ns)
			if seen[target] || !inZone(target, child.name) {
				continue
			}
			seen[target] = true
			if n := s.get(target); n != nil {
				glue := &node{name: target}
				for _, t := range []uint16{dns.TypeA, dns.TypeAAAA} {
					if rrs := n.rrs(t); len(rrs) > 0 {
						glue.sets = append(glue.sets, rrset{qtype: t, rrs: rrs})
					}
				}
				if len(glue.sets) > 0 {
					nodes = append(nodes, glue)
				}
			}
		}
	}
	return nodes
}

// ZoneSize is what a zone of a snapshot holds: the names that own records
// and their records, the apex SOA and NS excepted.
type ZoneSize struct{ Names, Records int }

// Sizes returns the size of each zone, in the order of Zones. It reads every
// name: callers keep the result for the snapshot rather than asking per query.
func (s *Snapshot) Sizes() []ZoneSize {
	sizes := make([]ZoneSize, len(s.zoneNames))
	s.names.each(s.bit, func(v view) {
		n, b := v.sets()
		if n == 0 {
			return
		}
		zi := ZoneOf(s.zoneNames, string(v.name()))
		if zi < 0 {
			return
		}
		sizes[zi].Names++
		for range n {
			var set packedSet
			set, b = nextSet(b)
			sizes[zi].Records += set.count
		}
	})
	return sizes
}
