package gateway

import (
	"hash/maphash"

	"github.com/miekg/dns"
)

// shardCount is the number of maps a snapshot spreads its names over. A change
// copies only the shards it touches, so an update costs O(names/shardCount).
const shardCount = 256

// snapshot is an immutable view of every zone of one plugin instance. The query
// path loads it with one atomic read and never takes a lock.
type snapshot struct {
	seed   maphash.Seed
	shards [shardCount]map[string]*node
	zones  []zoneState // in the order of Index.zones
	cuts   bool        // some name below an apex has NS records (a delegation)
}

// zoneState is the per-zone part of a snapshot.
type zoneState struct {
	serial uint32
	soa    []dns.RR // the zone's SOA record, ready for a message section
}

func shardOf(seed maphash.Seed, name string) int {
	return int(maphash.String(seed, name) % shardCount)
}

// get returns the node of name, or nil when the name does not exist.
func (s *snapshot) get(name string) *node {
	return s.shards[shardOf(s.seed, name)][name]
}

// names returns the number of names in the snapshot, empty non-terminals included.
func (s *snapshot) names() int {
	n := 0
	for _, m := range s.shards {
		n += len(m)
	}
	return n
}
