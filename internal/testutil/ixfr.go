package testutil

import (
	"fmt"
	"slices"

	"github.com/miekg/dns"
)

// IncrementalIXFR reports whether a transfer is an incremental IXFR: a second
// SOA right after the first (RFC 1995 §4).
func IncrementalIXFR(rrs []dns.RR) bool {
	if len(rrs) < 3 {
		return false
	}
	_, ok := rrs[1].(*dns.SOA)
	return ok
}

// ApplyIXFR applies the incremental IXFR ixfr to the full transfer base and
// returns the full transfer it leads to (the new SOA, the records, the new
// SOA). It fails unless ixfr starts from base's serial, deletes only records
// base has and adds only records it lacks (RFC 1995 §4).
func ApplyIXFR(base, ixfr []dns.RR) ([]dns.RR, error) {
	if !IncrementalIXFR(ixfr) || len(base) < 2 {
		return nil, fmt.Errorf("not an incremental IXFR: %q", inOrder(ixfr))
	}
	newSOA, fromSOA := ixfr[0].(*dns.SOA), ixfr[1].(*dns.SOA)
	if last, ok := ixfr[len(ixfr)-1].(*dns.SOA); !ok || last.Serial != newSOA.Serial {
		return nil, fmt.Errorf("IXFR not ended by its SOA: %q", inOrder(ixfr))
	}
	if fromSOA.Serial != base[0].(*dns.SOA).Serial {
		return nil, fmt.Errorf("IXFR from serial %d applied to serial %d", fromSOA.Serial, base[0].(*dns.SOA).Serial)
	}
	have := map[string]dns.RR{}
	for _, rr := range base[1 : len(base)-1] {
		have[rr.String()] = rr
	}
	adding := false
	for _, rr := range ixfr[2 : len(ixfr)-1] {
		if soa, ok := rr.(*dns.SOA); ok {
			if adding || soa.Serial != newSOA.Serial {
				return nil, fmt.Errorf("unexpected SOA in the IXFR: %s", rr)
			}
			adding = true
			continue
		}
		k := rr.String()
		_, ok := have[k]
		switch {
		case !adding && !ok:
			return nil, fmt.Errorf("IXFR deletes %s, which the zone lacks", rr)
		case adding && ok:
			return nil, fmt.Errorf("IXFR adds %s, which the zone has", rr)
		case adding:
			have[k] = rr
		default:
			delete(have, k)
		}
	}
	if !adding {
		return nil, fmt.Errorf("IXFR without its additions: %q", inOrder(ixfr))
	}
	keys := make([]string, 0, len(have))
	for k := range have {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := []dns.RR{newSOA}
	for _, k := range keys {
		out = append(out, have[k])
	}
	return append(out, newSOA), nil
}

// inOrder returns the presentation form of rrs, in their order.
func inOrder(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = rr.String()
	}
	return out
}
