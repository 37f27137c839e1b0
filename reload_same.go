package gateway

import (
	"slices"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// sameZone reports whether zone ai of a and zone bi of b hold the same
// records, their SOA's serial aside: what a transfer carries.
func sameZone(a *index.Snapshot, ai int, b *index.Snapshot, bi int) bool {
	return slices.Equal(zoneLines(a, ai), zoneLines(b, bi))
}

// zoneLines returns the records of zone zi of s, its SOA with serial 0, in
// presentation form, sorted.
func zoneLines(s *index.Snapshot, zi int) []string {
	var lines []string
	for _, rr := range s.SOA(zi) {
		soa := *rr.(*dns.SOA)
		soa.Serial = 0
		lines = append(lines, soa.String())
	}
	for _, rrs := range [][]dns.RR{s.NS(zi), s.Records(zi)} {
		for _, rr := range rrs {
			lines = append(lines, rr.String())
		}
	}
	slices.Sort(lines)
	return lines
}
