package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func TestTransferIXFR(t *testing.T) {
	g := xtGateway(t, xtZones, xtZone)
	s := g.index.Snapshot()
	serial := s.Serial(0)
	soa := s.SOA(0)[0]
	full := xtStrings(xtTransfer(t, g, "example.com.", 0))
	for _, tc := range []struct {
		name   string
		serial uint32
		full   bool
	}{
		{"current", serial, false},
		{"newer", serial + 1, false},
		{"much newer", serial + 1<<31 - 1, false},
		{"older", serial - 1, true},
		{"much older", serial - 1<<31 + 1, true},
		// Serial arithmetic (RFC 1982): 2^31+1 ahead is behind.
		{"wrapped", serial + 1<<31 + 1, true},
	} {
		got := xtTransfer(t, g, "example.com.", tc.serial)
		if tc.full {
			if !slices.Equal(xtStrings(got), full) {
				t.Errorf("%s (%d): not the full zone:\n%s", tc.name, tc.serial, strings.Join(xtStrings(got), "\n"))
			}
			continue
		}
		if len(got) != 1 || got[0].String() != soa.String() {
			t.Errorf("%s (%d): got %q, want the single SOA %s", tc.name, tc.serial, xtStrings(got), soa)
		}
	}
}

// xtIncremental reports whether a transfer is an incremental IXFR: a second
// SOA right after the first (RFC 1995 §4).
func xtIncremental(rrs []dns.RR) bool {
	if len(rrs) < 3 {
		return false
	}
	_, ok := rrs[1].(*dns.SOA)
	return ok
}

// xtApplyIXFR applies the incremental IXFR ixfr to the full transfer base and
// returns the full transfer it leads to (the new SOA, the records, the new
// SOA). It fails unless ixfr starts from base's serial, deletes only records
// base has and adds only records it lacks (RFC 1995 §4).
func xtApplyIXFR(base, ixfr []dns.RR) ([]dns.RR, error) {
	if !xtIncremental(ixfr) || len(base) < 2 {
		return nil, fmt.Errorf("not an incremental IXFR: %q", xtStrings(ixfr))
	}
	newSOA, fromSOA := ixfr[0].(*dns.SOA), ixfr[1].(*dns.SOA)
	if last, ok := ixfr[len(ixfr)-1].(*dns.SOA); !ok || last.Serial != newSOA.Serial {
		return nil, fmt.Errorf("IXFR not ended by its SOA: %q", xtStrings(ixfr))
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
		return nil, fmt.Errorf("IXFR without its additions: %q", xtStrings(ixfr))
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
