//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestPersistedCopy: a server started while the API server is unreachable
// answers from the copy the persist option wrote, at once, authoritatively
// and with its serial, AXFR included; it is ready meanwhile; once the API
// server answers, it serves live data with a later serial.
func TestPersistedCopy(t *testing.T) {
	dir := t.TempDir()
	env := "K8SGW_PERSIST_DIR=" + dir
	copyFile := filepath.Join(dir, "example.com.zone")
	s := startServer(t, "test/e2e/testdata/Corefile.persist", kubeconfig, env)
	ns := namespace(t)
	lb := lbService(t, s, ns, "192.0.2.70")
	// The copy follows within about a second.
	begin := time.Now()
	for !hasRecord(readFile(t, copyFile), lb, "A", "192.0.2.70") {
		if time.Since(begin) > 10*time.Second {
			t.Fatalf("the copy has no record of %s after 10s:\n%s", lb, readFile(t, copyFile))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("answer → on disk: %s", time.Since(begin).Round(time.Millisecond))
	s.stop()
	persisted := copySerial(t, copyFile)

	// A kubeconfig whose API server is a closed port on loopback.
	down := startServer(t, "test/e2e/testdata/Corefile.persist", unreachableKubeconfig(t), env)
	want := positive(lb + " 30 IN A 192.0.2.70")
	if r, err := down.ask(lb, dns.TypeA); err != nil || want.check(r) != nil {
		t.Fatalf("%s from the copy: %v %v", lb, r, err)
	}
	if got := soaSerial(down); got != persisted {
		t.Errorf("serial %d answered from the copy, want the copy's %d", got, persisted)
	}
	down.eventually(t, time.Second, "none."+ns+".example.com.", dns.TypeA, nxdomain)
	// AXFR sends the copy's records as they are on disk.
	axfr := digLines(t, "@127.0.0.1", "-p", strconv.Itoa(down.port), "example.com.", "AXFR")
	if len(axfr) < 3 || strings.Fields(axfr[0])[3] != "SOA" || axfr[0] != axfr[len(axfr)-1] {
		t.Fatalf("AXFR from the copy:\n%s", strings.Join(axfr, "\n"))
	}
	onDisk := copyRecords(t, copyFile)
	if got := slices.Sorted(slices.Values(axfr[:len(axfr)-1])); !slices.Equal(got, onDisk) {
		t.Errorf("AXFR from the copy:\n%s\nthe copy:\n%s", strings.Join(got, "\n"), strings.Join(onDisk, "\n"))
	}
	down.stop()

	if cluster == nil {
		t.Skip("the cluster was not started by these tests; not stopping its API server")
	}
	// A change the copy does not have, then the API server goes down and
	// the plugin starts: the copy first, then live data.
	setLBStatus(t, ns, "service", "lb", "192.0.2.71")
	startAPIServer := stopAPIServer(t)
	started := time.Now()
	s.start()
	t.Logf("start → ready from the copy: %s", time.Since(started).Round(time.Millisecond))
	s.eventually(t, time.Second, lb, dns.TypeA, want)
	if got := soaSerial(s); got != persisted {
		t.Errorf("serial %d, want the copy's %d", got, persisted)
	}
	startAPIServer()
	d := s.eventually(t, 60*time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.71"))
	t.Logf("API server started → live answer: %s", d.Round(time.Millisecond))
	if got := soaSerial(s); int32(got-persisted) <= 0 {
		t.Errorf("live serial %d not past the copy's %d", got, persisted)
	}
}

// unreachableKubeconfig returns the test cluster's kubeconfig with its
// server moved to a loopback port nothing listens on.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	port := 0
	for p := 27199; p > 27100 && port == 0; p-- {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(p), 100*time.Millisecond); err == nil {
			c.Close()
			continue
		}
		port = p
	}
	cfg := regexp.MustCompile(`server: https://[^\s]+`).ReplaceAllString(readFile(t, kubeconfig), fmt.Sprintf("server: https://127.0.0.1:%d", port))
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// hasRecord reports whether a zone file holds the record name TYPE data
// (objects of earlier runs may publish the same data under other names).
func hasRecord(zone, name, qtype, data string) bool {
	for _, line := range strings.Split(zone, "\n") {
		if f := strings.Fields(line); len(f) == 5 && f[0] == name && f[3] == qtype && f[4] == data {
			return true
		}
	}
	return false
}

// copySerial returns the serial in the header of a copy.
func copySerial(t *testing.T, path string) uint32 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^; serial (\d+) written `).FindStringSubmatch(readFile(t, path))
	if m == nil {
		t.Fatalf("no serial line in %s", path)
	}
	n, _ := strconv.ParseUint(m[1], 10, 32)
	return uint32(n)
}

// copyRecords returns the records of a copy, whitespace folded, sorted.
func copyRecords(t *testing.T, path string) []string {
	t.Helper()
	var rrs []string
	for _, line := range strings.Split(readFile(t, path), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, ";") {
			rrs = append(rrs, strings.Join(strings.Fields(line), " "))
		}
	}
	slices.Sort(rrs)
	return rrs
}

// TestPersistedCopyDNSSEC: answers from a copy, signed on the fly by the
// dnssec plugin, validate in unbound as live answers do.
func TestPersistedCopyDNSSEC(t *testing.T) {
	key, ds := dnssecKey(t, t.TempDir())
	dir := t.TempDir()
	env := []string{"K8SGW_PERSIST_DIR=" + dir, "K8S_GATEWAY_DNSSEC_KEY=" + key}
	s := startServer(t, "test/e2e/testdata/Corefile.persist-dnssec", kubeconfig, env...)
	ns := namespace(t)
	applyLB(t, ns, "192.0.2.72")
	lb := "lb." + ns + ".example.com."
	s.eventually(t, 5*time.Second, lb, dns.TypeA, positive(lb+" 30 IN A 192.0.2.72"))
	copyFile := filepath.Join(dir, "example.com.zone")
	for begin := time.Now(); !hasRecord(readFile(t, copyFile), lb, "A", "192.0.2.72"); time.Sleep(20 * time.Millisecond) {
		if time.Since(begin) > 10*time.Second {
			t.Fatalf("the copy has no record of %s after 10s", lb)
		}
	}
	s.stop()

	down := startServer(t, "test/e2e/testdata/Corefile.persist-dnssec", unreachableKubeconfig(t), env...)
	u := startUnbound(t, "unbound", down.port, ds)
	for _, q := range []struct{ name, qtype, rcode string }{
		{lb, "A", "NOERROR"},
		{lb, "TXT", "NOERROR"},                           // NODATA
		{"none." + ns + ".example.com.", "A", "NOERROR"}, // a black lie
		{"example.com.", "SOA", "NOERROR"},
	} {
		r, err := resolve(u.port, q.name, q.qtype)
		if err != nil {
			t.Fatal(err)
		}
		if r.Rcode != q.rcode || !r.AD() {
			t.Errorf("unbound, %s %s from the copy: %s\nwant %s with AD", q.name, q.qtype, r, q.rcode)
		}
	}
	if r, err := resolve(u.port, lb, "A"); err != nil || !slices.ContainsFunc(r.Answer, func(rr string) bool { return strings.HasPrefix(rr, lb) && strings.HasSuffix(rr, " IN A 192.0.2.72") }) {
		t.Errorf("unbound, %s A from the copy: %s %v", lb, r, err)
	}
}
