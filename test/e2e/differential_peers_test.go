//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The servers of TestDifferential and the tally of their differences.

// diffBINDConf runs named as a second secondary of the plugin (%[3]d) for
// diffZone, on port %[2]d, in directory %[1]s: the second opinion on the
// differences left (its answers are not compared).
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
zone "differential.test" {
    type secondary;
    primaries { 127.0.0.1 port %[3]d; };
    file "differential.test.db";
    masterfile-format text;
};
`

// startDiffBIND starts named and waits until it serves serial; it returns
// its port.
func startDiffBIND(t *testing.T, pluginPort int, serial uint32) int {
	t.Helper()
	port, dir := freePort(t), t.TempDir()
	conf := filepath.Join(dir, "named.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(diffBINDConf, dir, port, pluginPort)), 0o644); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, "bind", dir, port, sbin(t, "named"), "-g", "-4", "-n", "1", "-c", conf)
	deadline := time.Now().Add(10 * time.Second)
	for zoneSerialAt(port, diffZone) != serial {
		if time.Now().After(deadline) {
			t.Fatalf("bind does not serve serial %d after 10s", serial)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return port
}

// diffPeers are the servers of the comparison, by port, and the zone. BIND
// (when bind is not 0) is asked only about the differences left, as a second
// opinion for whoever reads the report.
type diffPeers struct {
	plugin, knot, bind int
	rrsets             zoneRRsets
}

// ask sends q to both servers. With lossy, a UDP request that gets no
// reply is a nil reply, not an error.
func (p *diffPeers) ask(q diffQuery, lossy bool) (diffCase, error) {
	c := diffCase{q: q, zone: diffZone, rrsets: p.rrsets, peers: p}
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
