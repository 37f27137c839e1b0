//go:build e2e

package e2e

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The servers of the differential tests and the tally of their differences.

// diffBINDConf runs named as a second secondary of the plugin for the
// zones of diffBINDZone that follow it, on port %[2]d, in directory %[1]s:
// the second opinion on the differences left (its answers are not compared).
const diffBINDConf = `options {
    directory "%[1]s";
    pid-file "%[1]s/named.pid";
    session-keyfile "%[1]s/session.key";
    managed-keys-directory "%[1]s";
    listen-on port %[2]d { 127.0.0.1; };
    listen-on-v6 { none; };
    recursion no;
    dnssec-validation no;
    notify no;
    allow-transfer { none; };
    minimal-responses no-auth;
};
controls { };
`

// diffBINDZone is a zone (%[1]s) of diffBINDConf, from the plugin (%[2]d).
const diffBINDZone = `zone "%[1]s" {
    type secondary;
    primaries { 127.0.0.1 port %[2]d; };
    file "%[1]sdb";
    masterfile-format text;
};
`

// startDiffSecondaries waits until the zones of the plugin at pluginPort are
// stable, starts Knot and BIND as their secondaries, and checks that Knot's
// transfers equal the plugin's. It returns the servers and the zones'
// transfers, one after the other.
func startDiffSecondaries(t *testing.T, pluginPort int, zones ...string) (*diffPeers, []dns.RR) {
	t.Helper()
	p := &diffPeers{plugin: pluginPort, zones: zones, rrsets: zoneRRsets{}}
	serials := map[string]uint32{}
	var all []dns.RR
	transfers := map[string][]dns.RR{}
	for _, z := range zones {
		serials[z] = stableSerial(t, pluginPort, z)
		axfr := transferZone(t, pluginPort, z)
		transfers[z] = axfr
		maps.Copy(p.rrsets, newZoneRRsets(axfr))
		all = append(all, axfr...)
	}
	knotConf, bindConf := diffKnotConf, diffBINDConf
	for _, z := range zones {
		// Each stanza escaped for the Sprintf of start.
		knotConf += strings.ReplaceAll(fmt.Sprintf(diffKnotZone, strings.TrimSuffix(z, ".")), "%", "%%")
		bindConf += strings.ReplaceAll(fmt.Sprintf(diffBINDZone, z, pluginPort), "%", "%%")
	}
	start := func(name, bin, conf string, args ...string) int {
		port, dir := freePort(t), t.TempDir()
		file := filepath.Join(dir, name+".conf")
		if err := os.WriteFile(file, []byte(fmt.Sprintf(conf, dir, port, pluginPort)), 0o644); err != nil {
			t.Fatal(err)
		}
		startDaemon(t, name, dir, port, sbin(t, bin), append(args, "-c", file)...)
		deadline := time.Now().Add(10 * time.Second)
		for _, z := range zones {
			for zoneSerialAt(port, z) != serials[z] {
				if time.Now().After(deadline) {
					t.Fatalf("%s does not serve %s serial %d after 10s", name, z, serials[z])
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		return port
	}
	p.knot = start("knot", "knotd", knotConf)
	for _, z := range zones {
		if got := transferZone(t, p.knot, z); !slices.Equal(sortedRRs(got), sortedRRs(transfers[z])) {
			t.Fatalf("knot's AXFR of %s differs from the plugin's:\n%s", z, diffReplies(sortedRRs(transfers[z]), sortedRRs(got)))
		}
	}
	// -g: foreground, log to stderr; -n 1: one worker thread; -4: IPv4 only.
	p.bind = start("bind", "named", bindConf, "-g", "-4", "-n", "1")
	return p, all
}

// diffPeers are the servers of the comparison, by port, and the zone. BIND
// (when bind is not 0) is asked only about the differences left, as a second
// opinion for whoever reads the report.
type diffPeers struct {
	plugin, knot, bind int
	zones              []string // the plugin's, each absolute
	rrsets             zoneRRsets
}

// zoneOf is the most specific zone of name, "" when none.
func (p *diffPeers) zoneOf(name string) string {
	best := ""
	for _, z := range p.zones {
		if dns.IsSubDomain(z, name) && len(z) > len(best) {
			best = z
		}
	}
	return best
}

// ask sends q to both servers. With lossy, a UDP request that gets no
// reply is a nil reply, not an error.
func (p *diffPeers) ask(q diffQuery, lossy bool) (diffCase, error) {
	c := diffCase{q: q, zone: p.zoneOf(q.name), rrsets: p.rrsets, peers: p}
	var err error
	if c.plugin, err = exchangeLossy(p.plugin, q.msg(), q.flags.tcp, lossy); err != nil {
		return c, fmt.Errorf("%s: plugin: %v", q, err)
	}
	if c.knot, err = exchangeLossy(p.knot, q.msg(), q.flags.tcp, lossy); err != nil {
		return c, fmt.Errorf("%s: knot: %v", q, err)
	}
	return c, nil
}

// diffTally counts the outcome of compared cases.
type diffTally struct {
	forgiven  map[string]int
	truncated int
	diffs     []string
}

// add compares the replies of c and records the outcome; it returns the diff.
func (d *diffTally) add(c diffCase) string {
	if d.forgiven == nil {
		d.forgiven = map[string]int{}
	}
	if c.plugin != nil && c.knot != nil && c.plugin.Truncated && c.knot.Truncated {
		d.truncated++
	}
	rules, diff := compareReplies(c)
	for _, r := range rules {
		d.forgiven[r]++
	}
	if diff == "" {
		return ""
	}
	if c.peers != nil && c.peers.bind != 0 {
		b, err := exchangeLossy(c.peers.bind, c.q.msg(), c.q.flags.tcp, true)
		lines := renderReply(b)
		if err != nil {
			lines = []string{err.Error()}
		}
		diff += "  bind (second opinion):\n     " + strings.Join(lines, "\n     ") + "\n"
	}
	d.diffs = append(d.diffs, c.q.String()+"\n"+diff)
	return diff
}

// reportDiffs fails the test with the first differences found.
func reportDiffs(t *testing.T, what string, n int, diffs []string) {
	t.Helper()
	if len(diffs) == 0 {
		return
	}
	if path := os.Getenv("K8SGW_DIFF_DUMP"); path != "" {
		if err := os.WriteFile(path, []byte(strings.Join(diffs, "\n")), 0o644); err != nil {
			t.Errorf("K8SGW_DIFF_DUMP: %v", err)
		}
	}
	const show = 25
	shown := diffs[:min(len(diffs), show)]
	t.Errorf("%d of %d %s answered differently by the plugin and knot (lines marked ! are not in the other's reply); the first %d:\n%s",
		len(diffs), n, what, len(shown), strings.Join(shown, "\n"))
}
