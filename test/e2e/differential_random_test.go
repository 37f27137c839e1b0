//go:build e2e

package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The randomized campaign of TestDifferential: queries drawn from a seeded
// generator, asked of the plugin and of Knot like the matrix's, and compared
// with the same allowances. The names come from the zone itself (owners,
// their children, empty non-terminals, names under wildcards and below
// delegations, the targets of its records), from outside it, and long
// names up to 255 octets, in random case; the types, classes, header bits,
// EDNS versions, sizes and options, and transports are drawn too.
//
// K8SGW_DIFF_SEED sets the seed (else one is drawn and printed), and
// K8SGW_DIFF_QUERIES the count (default diffRandomQueries; the long run
// asks for more, e.g. 200000).

// diffRandomQueries is the count of the default run (a few seconds).
const diffRandomQueries = 2000

// diffCampaign returns the seed and count of the campaign.
func diffCampaign(t *testing.T) (seed uint64, n int) {
	t.Helper()
	seed = rand.Uint64()
	if s := os.Getenv("K8SGW_DIFF_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			t.Fatalf("K8SGW_DIFF_SEED=%q: %v", s, err)
		}
		seed = v
	}
	n = diffRandomQueries
	if s := os.Getenv("K8SGW_DIFF_QUERIES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			t.Fatalf("K8SGW_DIFF_QUERIES=%q: not a count", s)
		}
		n = v
	}
	return seed, n
}

// diffGen draws the queries of the campaign.
type diffGen struct {
	r      *rand.Rand
	zone   string
	serial uint32 // the zone's, for the SOA of IXFR queries
	// Names of the zone, lower case, absolute.
	owners, ents, wildcards, cuts, targets []string
}

// newDiffGen collects the names of the zone from its transfer.
func newDiffGen(seed uint64, zone string, axfr []dns.RR) *diffGen {
	g := &diffGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), zone: zone, serial: axfr[0].(*dns.SOA).Serial}
	owners := map[string]bool{}
	for _, rr := range axfr {
		name := strings.ToLower(rr.Header().Name)
		owners[name] = true
		switch x := rr.(type) {
		case *dns.NS:
			if name != zone {
				g.cuts = append(g.cuts, name)
			}
			g.targets = append(g.targets, x.Ns)
		case *dns.CNAME:
			g.targets = append(g.targets, x.Target)
		case *dns.MX:
			g.targets = append(g.targets, x.Mx)
		case *dns.SRV:
			g.targets = append(g.targets, x.Target)
		case *dns.PTR:
			g.targets = append(g.targets, x.Ptr)
		}
	}
	ents := map[string]bool{}
	for name := range owners {
		g.owners = append(g.owners, name)
		if strings.HasPrefix(name, "*.") {
			g.wildcards = append(g.wildcards, name[2:])
		}
		for p := name; dns.IsSubDomain(zone, p) && p != zone; {
			i, _ := dns.NextLabel(p, 0)
			p = p[i:]
			if !owners[p] {
				ents[p] = true
			}
		}
	}
	for name := range ents {
		g.ents = append(g.ents, name)
	}
	for _, s := range [][]string{g.owners, g.ents, g.wildcards, g.cuts, g.targets} {
		slices.Sort(s) // map order must not change what a seed draws
	}
	g.cuts, g.targets = slices.Compact(sortedCopy(g.cuts)), slices.Compact(sortedCopy(g.targets))
	return g
}

func sortedCopy(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func (g *diffGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// chance is true with probability p.
func (g *diffGen) chance(p float64) bool { return g.r.Float64() < p }

// query draws one query.
func (g *diffGen) query() diffQuery {
	q := diffQuery{name: g.name(), qtype: g.qtype(), qclass: g.qclass(), flags: g.flags()}
	if q.qtype == dns.TypeIXFR && g.chance(0.75) {
		if g.chance(0.5) {
			q.name = g.zone // most IXFRs ask for the zone
		}
		serials := []uint32{0, g.serial - 1, g.serial, g.serial + 1, g.r.Uint32()}
		q.ixfrSOA, q.serial = true, serials[g.r.IntN(len(serials))]
		q.flags.label += fmt.Sprintf(" soa=%d", q.serial)
	}
	return q
}

// checkRandomQueries runs the campaign against both servers.
func checkRandomQueries(t *testing.T, peers *diffPeers, axfr []dns.RR) {
	t.Helper()
	seed, n := diffCampaign(t)
	t.Logf("randomized campaign: seed %d (K8SGW_DIFF_SEED=%d to repeat), %d queries (K8SGW_DIFF_QUERIES)", seed, seed, n)
	g := newDiffGen(seed, diffZone, axfr)
	start := time.Now()
	var tally diffTally
	for range n {
		c, err := peers.ask(g.query(), true)
		if err != nil {
			t.Fatal(err)
		}
		tally.add(c)
	}
	t.Logf("randomized: %d queries to each server in %s (%d truncated by both); allowed differences: %v",
		n, time.Since(start).Round(time.Millisecond), tally.truncated, tally.forgiven)
	reportDiffs(t, fmt.Sprintf("random queries (seed %d)", seed), n, tally.diffs)
}
