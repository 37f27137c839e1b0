//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The CDS rollover test (cds_rollover_test.go) runs a signed parent, BIND
// serving com. with a dnssec-policy, and a parent-side agent that keeps the
// DS of example.com in step with the child's CDS records, with BIND's tools
// only: dig reads the child's DNSKEY, CDNSKEY and CDS with their signatures,
// dnssec-cds checks them against the DS in place (RFC 7344 §4.1) and writes
// an nsupdate script, and nsupdate applies it to the parent with TSIG. These
// are the commands of docs/features/secondaries.md.

// signedParentNamedConf is BIND as the signed parent com.: the key
// cds-agent. may change the DS of example.com, nothing else.
const signedParentNamedConf = `options {
    directory "%[1]s";
    key-directory "%[1]s";
    pid-file "%[1]s/named.pid";
    session-keyfile "%[1]s/session.key";
    listen-on port %[2]d { 127.0.0.1; };
    listen-on-v6 { none; };
    recursion no;
    dnssec-validation no;
    notify no;
};
controls { };
key "cds-agent." {
    algorithm hmac-sha256;
    secret "%[3]s";
};
zone "com" {
    type primary;
    file "com.db";
    dnssec-policy default;
    update-policy {
        grant cds-agent. name example.com. DS;
    };
};
`

// signedParentZone delegates example.com to the plugin; TTLs are short so
// that caches follow the DS changes within seconds.
const signedParentZone = `$TTL 5
com. IN SOA ns.com. hostmaster.com. 1 300 60 604800 5
com. IN NS ns.com.
ns.com. IN A 127.0.0.1
example.com. IN NS dns1.kube-system.example.com.
dns1.kube-system.example.com. IN A 127.0.0.1
`

// dsTTL is the TTL the agent gives the DS records it writes.
const dsTTL = 5

// startSignedParent runs the signed parent on port and returns it with the
// DNSKEY of its key-signing key, the trust anchor of the test's resolver.
func startSignedParent(t *testing.T, port int, secret string) (*daemon, string) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "named.conf")
	writeFile(t, conf, fmt.Sprintf(signedParentNamedConf, dir, port, secret))
	writeFile(t, filepath.Join(dir, "com.db"), signedParentZone)
	d := startDaemon(t, "parent", dir, port, sbin(t, "named"), "-g", "-4", "-n", "1", "-c", conf)
	deadline := time.Now().Add(20 * time.Second)
	for tries := 1; ; {
		if d.proc.Exited() && tries < 3 {
			// named 9.18 sometimes fails an assertion while it creates its
			// cache at startup on a loaded machine: once more.
			t.Logf("named exited at startup; starting it again:\n%s", lastLines(d.output(), 3))
			tries++
			d = startDaemon(t, "parent", dir, port, sbin(t, "named"), "-g", "-4", "-n", "1", "-c", conf)
		}
		// Signed once the DNSKEY RRset has its signature.
		out, _ := exec.Command(digBin, "+tries=1", "+time=1", "@127.0.0.1", "-p", strconv.Itoa(port), "+dnssec", "+noall", "+answer", "com.", "DNSKEY").CombinedOutput()
		lines := strings.Split(string(out), "\n")
		var ksk string
		signed := false
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) > 5 && f[3] == "DNSKEY" && f[4] == "257" {
				ksk = strings.Join(append([]string{f[0], f[3]}, f[4:]...), " ")
			}
			signed = signed || (len(f) > 4 && f[3] == "RRSIG" && f[4] == "DNSKEY")
		}
		if ksk != "" && signed {
			return d, ksk
		}
		if time.Now().After(deadline) {
			t.Fatalf("parent not signed after 20s: %q\n%s", lines, d.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// cdsAgent is the parent's side: it keeps example.com's DS in com. from the
// child's CDS, as an operator's cron job would.
type cdsAgent struct {
	t                       *testing.T
	dir, dsset, secret      string
	childPort, parentPort   int
	runs, changes, failures int
	lastErr                 string
}

func newCDSAgent(t *testing.T, childPort, parentPort int, secret string) *cdsAgent {
	dir := t.TempDir()
	return &cdsAgent{t: t, dir: dir, dsset: filepath.Join(dir, "dsset-example.com."), secret: secret,
		childPort: childPort, parentPort: parentPort}
}

// nsupdate applies script (update lines) to com. at the parent with the
// agent's TSIG key.
func (a *cdsAgent) nsupdate(script string) error {
	in := fmt.Sprintf("server 127.0.0.1 %d\nzone com.\n%ssend\n", a.parentPort, script)
	cmd := exec.Command("nsupdate", "-y", "hmac-sha256:cds-agent.:"+a.secret)
	cmd.Stdin = strings.NewReader(in)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nsupdate: %v\n%s\nscript:\n%s", err, out, in)
	}
	return nil
}

// bootstrap installs the first DS from the child's CDS as it reads it
// (RFC 8078 §3, accept from inception: the path to the child is trusted,
// loopback here) and starts the dsset file that dnssec-cds keeps from then
// on. Its time is set back four hours: dnssec-cds refuses signatures older
// than the file, and the dnssec plugin's signatures start three hours before
// they are made.
func (a *cdsAgent) bootstrap() {
	t := a.t
	t.Helper()
	cds := digLines(t, "@127.0.0.1", "-p", strconv.Itoa(a.childPort), "+noall", "+answer", "example.com.", "CDS")
	var ds, script strings.Builder
	for _, l := range cds {
		f := strings.Fields(l)
		if len(f) < 8 || f[3] != "CDS" {
			continue
		}
		rr := fmt.Sprintf("example.com. %d IN DS %s", dsTTL, strings.Join(f[4:], " "))
		fmt.Fprintln(&ds, rr)
		fmt.Fprintln(&script, "update add "+rr)
	}
	if ds.Len() == 0 {
		t.Fatalf("the child publishes no CDS: %q", cds)
	}
	if err := a.nsupdate(script.String()); err != nil {
		t.Fatal(err)
	}
	writeFile(t, a.dsset, ds.String())
	if out, err := exec.Command("touch", "-d", "4 hours ago", a.dsset).CombinedOutput(); err != nil {
		t.Fatalf("touch: %v\n%s", err, out)
	}
}

// run is one pass of the agent: read the child, let dnssec-cds decide, apply
// its script. It returns the update applied (empty when the DS is current).
func (a *cdsAgent) run() (string, error) {
	a.runs++
	if b, err := os.ReadFile(a.dsset); err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return "", err // no DS: insecure, nothing to check the child's records with
	}
	child := filepath.Join(a.dir, "child")
	out, err := exec.Command(digBin, "@127.0.0.1", "-p", strconv.Itoa(a.childPort), "+dnssec", "+noall", "+answer",
		"example.com.", "DNSKEY", "example.com.", "CDNSKEY", "example.com.", "CDS").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("dig: %v\n%s", err, out)
	}
	if err := os.WriteFile(child, out, 0o644); err != nil {
		return "", err
	}
	if deleteSignal(string(out)) {
		// dnssec-cds (BIND 9.18) checks the signatures of the delete
		// records against the DS in place but does not know their meaning:
		// it would make a DS of algorithm 0 from the CDNSKEY. Its check
		// decides; the agent removes the DS itself (RFC 8078 §4).
		if b, err := exec.Command("dnssec-cds", "-f", child, "-d", a.dsset, "example.com.").CombinedOutput(); err != nil {
			return "", fmt.Errorf("dnssec-cds (delete): %v\n%s\nchild:\n%s", err, b, out)
		}
		script := "update del example.com. IN DS\n"
		if err := a.nsupdate(script); err != nil {
			return "", err
		}
		a.changes++
		return script, os.WriteFile(a.dsset, nil, 0o644)
	}
	cmd := exec.Command("dnssec-cds", "-u", "-i", "-T", strconv.Itoa(dsTTL), "-f", child, "-d", a.dsset, "example.com.")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("dnssec-cds: %v\n%s\nchild:\n%s", err, stderr.String(), out)
	}
	// The script ends in "send"; with nothing to change it is "send" alone.
	script := strings.TrimSuffix(strings.TrimSpace(string(b)), "send")
	if strings.TrimSpace(script) == "" {
		return "", nil
	}
	a.changes++
	return script, a.nsupdate(script)
}

// deleteSignal reports whether the child's CDS and CDNSKEY RRsets in dig's
// output are the RRsets of RFC 8078 §4's delete records.
func deleteSignal(records string) bool {
	var cds, cdnskey []string
	for _, l := range strings.Split(records, "\n") {
		f := strings.Fields(l)
		if len(f) < 5 {
			continue
		}
		switch data := strings.Join(f[4:], " "); f[3] {
		case "CDS":
			cds = append(cds, data)
		case "CDNSKEY":
			cdnskey = append(cdnskey, data)
		}
	}
	return slices.Equal(cds, []string{"0 0 0 00"}) && (cdnskey == nil || slices.Equal(cdnskey, []string{"0 3 0 AA=="}))
}

// loop runs the agent every interval until stop is closed.
func (a *cdsAgent) loop(interval time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		if script, err := a.run(); err != nil {
			a.failures++
			a.lastErr = err.Error()
		} else if script != "" {
			a.t.Logf("%s agent applied:\n%s", time.Now().UTC().Format("15:04:05.000"), strings.TrimSpace(script))
		}
		select {
		case <-stop:
			return
		case <-time.After(interval):
		}
	}
}

// parentDS returns the key tags of example.com's DS records in the parent.
func parentDS(t *testing.T, port int) []string {
	t.Helper()
	var tags []string
	for _, l := range digLines(t, "@127.0.0.1", "-p", strconv.Itoa(port), "+noall", "+answer", "example.com.", "DS") {
		if f := strings.Fields(l); len(f) > 4 && f[3] == "DS" {
			tags = append(tags, f[4])
		}
	}
	slices.Sort(tags)
	return tags
}

// childCDS returns the key tags of the child's CDS records ("0" for the
// delete record).
func childCDS(t *testing.T, port int) []string {
	t.Helper()
	var tags []string
	for _, l := range digLines(t, "@127.0.0.1", "-p", strconv.Itoa(port), "+noall", "+answer", "example.com.", "CDS") {
		if f := strings.Fields(l); len(f) > 4 && f[3] == "CDS" {
			tags = append(tags, f[4])
		}
	}
	slices.Sort(tags)
	return tags
}

// waitTags polls get until it returns want, and returns how long it took.
func waitTags(t *testing.T, what string, timeout time.Duration, get func() []string, want ...string) time.Duration {
	t.Helper()
	slices.Sort(want)
	start := time.Now()
	for {
		got := get()
		if slices.Equal(got, want) || (len(got) == 0 && len(want) == 0) {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("%s: key tags %q after %s, want %q", what, got, timeout, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
