//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// The zone transfer tests run k8s_gateway as a hidden primary
// (test/e2e/testdata/Corefile.primary) with real secondaries, BIND's named and Knot's
// knotd, configured from test/e2e/testdata/secondaries/, all on 127.0.0.1.

// sbin finds a daemon that Debian installs in /usr/sbin, which may not be on PATH.
func sbin(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p := "/usr/sbin/" + name; fileExists(p) {
		return p
	}
	t.Fatalf("%s not found: run hack/install-deps.sh (bind9, bind9-utils, knot, unbound)", name)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// daemon is a DNS server process of another implementation, run for one test.
type daemon struct {
	name    string
	dir     string // its working directory, a t.TempDir()
	*server        // for queries (only port is set)
	proc    *harness.Process
}

// startDaemon runs bin with args in dir and stops it when the test ends.
func startDaemon(t *testing.T, name, dir string, port int, bin string, args ...string) *daemon {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	proc, err := harness.Start(cmd)
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	d := &daemon{name: name, dir: dir, server: &server{t: t, port: port}, proc: proc}
	t.Cleanup(func() {
		proc.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("%s output:\n%s", name, d.output())
		}
	})
	return d
}

func (d *daemon) output() string { return d.proc.Out.String() }

// renderConfig reads a file of the repository and fills its {$NAME} placeholders.
func renderConfig(t *testing.T, file string, vars map[string]string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{$"+k+"}", v)
	}
	if i := strings.Index(s, "{$"); i >= 0 {
		t.Fatalf("%s: placeholder left: %.30s", file, s[i:])
	}
	return s
}

// secondaryVars are the placeholders of test/e2e/testdata/secondaries/*.conf.
func secondaryVars(dir string, port, primaryPort int) map[string]string {
	return map[string]string{
		"DIR": dir, "LISTEN_IP": "127.0.0.1", "LISTEN_PORT": strconv.Itoa(port),
		"PRIMARY_IP": "127.0.0.1", "PRIMARY_PORT": strconv.Itoa(primaryPort),
	}
}

// startBIND runs named as a secondary of the plugin at primaryPort, answering on port.
func startBIND(t *testing.T, name string, port, primaryPort int) *daemon {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "named.conf")
	if err := os.WriteFile(conf, []byte(renderConfig(t, "test/e2e/testdata/secondaries/named.conf", secondaryVars(dir, port, primaryPort))), 0o644); err != nil {
		t.Fatal(err)
	}
	// -g: foreground, log to stderr; -n 1: one worker thread; -4: IPv4 only.
	return startDaemon(t, name, dir, port, sbin(t, "named"), "-g", "-4", "-n", "1", "-c", conf)
}

// startKnot runs knotd as a secondary of the plugin at primaryPort, answering on port.
func startKnot(t *testing.T, name string, port, primaryPort int) *daemon {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "knot.conf")
	if err := os.WriteFile(conf, []byte(renderConfig(t, "test/e2e/testdata/secondaries/knot.conf", secondaryVars(dir, port, primaryPort))), 0o644); err != nil {
		t.Fatal(err)
	}
	return startDaemon(t, name, dir, port, sbin(t, "knotd"), "-c", conf)
}

// soaSerial returns the SOA serial of example.com that srv answers, or 0.
func soaSerial(srv *server) uint32 {
	r, err := srv.query("example.com.", dns.TypeSOA)
	if err != nil || r.Rcode != "NOERROR" || len(r.Answer) != 1 {
		return 0
	}
	n, _ := strconv.ParseUint(fieldN(r.Answer[0], 6), 10, 32)
	return uint32(n)
}

// waitSerial waits until every secondary serves the plugin's current serial
// and returns how long each took, measured from start.
func waitSerial(t *testing.T, s *server, start time.Time, timeout time.Duration, peers ...*daemon) []time.Duration {
	t.Helper()
	took := make([]time.Duration, len(peers))
	deadline := time.Now().Add(timeout)
	for {
		want := soaSerial(s)
		done := true
		for i, p := range peers {
			if took[i] != 0 {
				continue
			}
			if got := soaSerial(p.server); want != 0 && got == want {
				took[i] = time.Since(start)
			} else {
				done = false
			}
		}
		if done {
			return took
		}
		if time.Now().After(deadline) {
			var states []string
			for _, p := range peers {
				states = append(states, fmt.Sprintf("%s: %d", p.name, soaSerial(p.server)))
			}
			t.Fatalf("secondaries not at the plugin's serial %d after %s: %s", want, timeout, strings.Join(states, ", "))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// question is one question of a comparison.
type question struct {
	name  string
	qtype uint16
}

// sameAnswers asks each question of the plugin and of every secondary, with
// both dig and the Go client, and fails unless all answers are equal: rcode,
// AA, and the answer, authority and additional sections record by record. It
// tries again for a few seconds, while a change (of another test's objects,
// still being deleted) is on its way to the secondaries.
func sameAnswers(t *testing.T, s *server, peers []*daemon, queries []question) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var diffs []string
		for _, q := range queries {
			// A transfer or serial bump can land between dig and the Go
			// client: a disagreement is retried like a difference.
			want, err := s.ask(q.name, q.qtype)
			if err != nil {
				diffs = append(diffs, fmt.Sprintf("plugin: %v", err))
				continue
			}
			for _, p := range peers {
				got, err := p.ask(q.name, q.qtype)
				if err != nil {
					diffs = append(diffs, fmt.Sprintf("%s: %v", p.name, err))
					continue
				}
				if got.String() != want.String() {
					diffs = append(diffs, fmt.Sprintf("%s %s: %s answers\n%s\nthe plugin\n%s", q.name, dns.TypeToString[q.qtype], p.name, got, want))
				}
			}
		}
		if len(diffs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the secondaries answer differently:\n%s", strings.Join(diffs, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// propagate makes a change through the API and waits until name/qtype
// shows it on the plugin and then on every secondary. It logs when, after the
// API call, the plugin answered the new data, when it published the new
// serial (and sent the NOTIFY), and how long after that each secondary
// answered the new data. Only NOTIFY can explain a delay of a few seconds:
// the zone's SOA refresh is 300 s. A change that follows another within the
// same second gets its serial, and so its NOTIFY, on the next second.
func propagate(t *testing.T, step string, s *server, peers []*daemon, change func(), name string, qtype uint16, want expectation) {
	t.Helper()
	// Let the serial of earlier changes be published (on the next second at
	// the latest) and transferred, so that the next serial is this change's.
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 20*time.Millisecond).Sub(now))
	waitSerial(t, s, time.Now(), 5*time.Second, peers...)
	serial0 := soaSerial(s)
	start := time.Now()
	change()
	var plugin, notified time.Duration
	// oldSeen is when the plugin was last seen with the old serial: a
	// secondary that had the new data before that moment got it without the
	// NOTIFY. Polling is sequential, so a secondary may be seen with the new
	// data a moment after the serial changed but before the loop looked.
	var oldSeen time.Duration
	took := make([]time.Duration, len(peers))
	deadline := start.Add(5 * time.Second)
	for pending := len(peers) + 2; pending > 0; time.Sleep(2 * time.Millisecond) {
		if plugin == 0 {
			if r, err := s.query(name, qtype); err == nil && want.check(r) == nil {
				plugin = time.Since(start)
				pending--
			}
		}
		if notified == 0 {
			if at := time.Since(start); soaSerial(s) != serial0 {
				notified = at
				pending--
			} else {
				oldSeen = at
			}
		}
		for i, p := range peers {
			if took[i] != 0 || plugin == 0 {
				continue
			}
			if r, err := p.query(name, qtype); err == nil && want.check(r) == nil {
				took[i] = time.Since(start)
				pending--
			}
		}
		if time.Now().After(deadline) {
			r, err := s.query(name, qtype)
			var states []string
			for _, p := range peers {
				pr, err := p.query(name, qtype)
				states = append(states, fmt.Sprintf("%s: %s %v", p.name, pr, err))
			}
			t.Fatalf("%s: %s %s not everywhere after 5s (serial %d → %d):\nplugin: %s %v\n%s", step, name, dns.TypeToString[qtype], serial0, soaSerial(s), r, err, strings.Join(states, "\n"))
		}
	}
	// dig agrees with the Go client.
	s.eventually(t, time.Second, name, qtype, want)
	for _, p := range peers {
		p.eventually(t, time.Second, name, qtype, want)
	}
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	parts := []string{fmt.Sprintf("plugin answers %s after the API call, new serial (NOTIFY) at %s", ms(plugin), ms(notified))}
	for i, p := range peers {
		parts = append(parts, fmt.Sprintf("%s %s after the NOTIFY", p.name, ms(took[i]-notified)))
		if took[i] < oldSeen {
			t.Errorf("%s: %s answered the change before the serial changed", step, p.name)
		}
	}
	t.Logf("%s: %s", step, strings.Join(parts, "; "))
}

// Log lines of the secondaries: a NOTIFY received, a zone transfer done.
// CoreDNS's NOTIFY carries no SOA, so they log no serial for it.
const (
	bindNotify   = `notify from 127\.0\.0\.1#\d+`
	bindTransfer = `transferred serial \d+`
	knotNotify   = `notify, incoming, remote 127\.0\.0\.1@\d+`
	knotTransfer = `refresh, remote 127\.0\.0\.1@\d+, zone updated`
)

// notifiedTransfers checks the log of a secondary: each zone transfer after
// the first skip ones is paid for by a NOTIFY logged before it that no
// earlier transfer used. Two NOTIFYs may both be logged before the first of
// their transfers (a refresh is still running when the second arrives), and
// a secondary may fold several NOTIFYs into one transfer; what can never
// happen without a refresh timer is more transfers than NOTIFYs. It returns
// the number of transfers.
func notifiedTransfers(t *testing.T, d *daemon, skip int, notify, transfer string) int {
	t.Helper()
	notifyRE, transferRE := regexp.MustCompile(notify), regexp.MustCompile(transfer)
	n, unused := 0, 0
	for _, line := range strings.Split(d.output(), "\n") {
		switch {
		case notifyRE.MatchString(line):
			unused++
		case transferRE.MatchString(line):
			n++
			if n <= skip {
				unused = 0 // those NOTIFYs went to the startup transfers
				continue
			}
			if unused == 0 {
				t.Errorf("%s: transfer without a NOTIFY before it: %s", d.name, line)
				continue
			}
			unused--
		}
	}
	return n
}

// TestTransferSecondaries: BIND and Knot secondaries of the plugin follow
// every change of the cluster within a few seconds, driven by NOTIFY, and
// answer exactly as the plugin does. A third secondary that the transfer
// plugin does not notify stays behind, which shows that the secondaries'
// refresh timers play no part.
func TestTransferSecondaries(t *testing.T) {
	bindPort, knotPort, lonePort := freePort(t), freePort(t), freePort(t)
	s := startServer(t, "test/e2e/testdata/Corefile.primary", kubeconfig,
		fmt.Sprintf("K8S_GATEWAY_SECONDARY1=127.0.0.1:%d", bindPort),
		fmt.Sprintf("K8S_GATEWAY_SECONDARY2=127.0.0.1:%d", knotPort))

	// The nameserver's own Service gives the glue of the apex NS.
	nameserverService(t, "192.0.2.53")
	glue := "dns1.kube-system.example.com."
	s.eventually(t, 5*time.Second, glue, dns.TypeA, positive(glue+" 30 IN A 192.0.2.53"))
	// A change within the second of the last serial gets its own on the
	// next second: the secondary that is not notified would miss it.
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 20*time.Millisecond).Sub(now))

	start := time.Now()
	bind := startBIND(t, "bind", bindPort, s.port)
	knot := startKnot(t, "knot", knotPort, s.port)
	lone := startBIND(t, "bind-not-notified", lonePort, s.port)
	peers := []*daemon{bind, knot}
	took := waitSerial(t, s, start, 20*time.Second, bind, knot, lone)
	t.Logf("initial transfer: bind %s, knot %s, bind-not-notified %s", took[0].Round(time.Millisecond), took[1].Round(time.Millisecond), took[2].Round(time.Millisecond))
	initialSerial := soaSerial(lone.server)

	ns := namespace(t)
	web := "web." + ns + ".example.com."
	www := "www." + ns + ".example.com."
	deep := "a.b.apps." + ns + ".example.com."
	srv := "_https._tcp." + web
	shop := "shop." + ns + ".example.com."
	alias := "alias." + ns + ".example.com."
	queries := []question{
		{"example.com.", dns.TypeSOA}, {"example.com.", dns.TypeNS}, {glue, dns.TypeA},
		{web, dns.TypeA}, {web, dns.TypeAAAA}, {web, dns.TypeTXT}, {www, dns.TypeA}, {deep, dns.TypeA},
		{"*.apps." + ns + ".example.com.", dns.TypeA}, {"apps." + ns + ".example.com.", dns.TypeA},
		{srv, dns.TypeSRV}, {shop, dns.TypeA}, {alias, dns.TypeA}, {alias, dns.TypeCNAME},
		{ns + ".example.com.", dns.TypeA}, {"nothing." + ns + ".example.com.", dns.TypeA},
	}

	// Create: a LoadBalancer Service with more names and a named port, an
	// Ingress, and an ExternalName Service (a CNAME out of the zone).
	kubectl(t, fmt.Sprintf(webServiceYAML+`---
apiVersion: v1
kind: Service
metadata: {name: alias, namespace: %[1]s}
spec: {type: ExternalName, externalName: lb-1234.elb.example.net}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: %[1]s}
spec:
  rules:
  - host: shop.%[1]s.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 443}}}}]}
`, ns), "apply", "-f", "-")
	propagate(t, "Service gets its address", s, peers, func() { setLBStatus(t, ns, "service", "web", "192.0.2.30", "2001:db8::30") },
		web, dns.TypeA, positive(web+" 30 IN A 192.0.2.30"))
	propagate(t, "Ingress gets its address", s, peers, func() { setLBStatus(t, ns, "ingress", "shop", "192.0.2.40") },
		shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.40"))
	sameAnswers(t, s, peers, queries)

	// Change.
	propagate(t, "change Service", s, peers, func() { setLBStatus(t, ns, "service", "web", "192.0.2.31") },
		deep, dns.TypeA, positive(deep+" 30 IN A 192.0.2.31"))
	sameAnswers(t, s, peers, queries)
	propagate(t, "change Ingress", s, peers, func() { setLBStatus(t, ns, "ingress", "shop", "192.0.2.41", "2001:db8::41") },
		shop, dns.TypeAAAA, positive(shop+" 30 IN AAAA 2001:db8::41"))

	// Delete.
	propagate(t, "delete Ingress", s, peers, func() { kubectl(t, "", "-n", ns, "delete", "ingress", "shop") },
		shop, dns.TypeA, nxdomain)
	propagate(t, "delete Service", s, peers, func() { kubectl(t, "", "-n", ns, "delete", "service", "web") },
		web, dns.TypeA, nxdomain)
	sameAnswers(t, s, peers, queries)

	// The secondary that gets no NOTIFY still serves the zone as it was.
	if got := soaSerial(lone.server); got != initialSerial {
		t.Errorf("the secondary without NOTIFY moved from serial %d to %d: a refresh timer fired", initialSerial, got)
	}
	// It does not have the alias created after its transfer (a wildcard of
	// another test's objects, still being deleted, may cover the name).
	if r, err := lone.ask(alias, dns.TypeCNAME); err != nil || strings.Contains(r.String(), "lb-1234.elb.example.net") {
		t.Errorf("the secondary without NOTIFY knows the alias %s: %s %v", alias, r, err)
	}

	// Every transfer after the first (at startup) came from a NOTIFY.
	for _, c := range []struct {
		d                *daemon
		notify, transfer string
	}{{bind, bindNotify, bindTransfer}, {knot, knotNotify, knotTransfer}, {lone, bindNotify, bindTransfer}} {
		n := notifiedTransfers(t, c.d, 1, c.notify, c.transfer)
		t.Logf("%s: %d transfers", c.d.name, n)
		if want := 5; c.d != lone && n < want {
			t.Errorf("%s: %d transfers, want at least %d (one at startup, one for each change)", c.d.name, n, want)
		}
		if c.d == lone && n != 1 {
			t.Errorf("%s: %d transfers, want the one at startup", c.d.name, n)
		}
	}
}

// TestTransferNotifyAtStartup: secondaries that started before the plugin,
// and failed their first refresh, get the zone as soon as the plugin is up,
// from the NOTIFY it sends at startup (their own retry comes much later:
// Knot's in about 10 s, BIND's in minutes). The same happens after a restart
// of the plugin, whose new serial is the time of the restart.
func TestTransferNotifyAtStartup(t *testing.T) {
	bindPort, knotPort := freePort(t), freePort(t)
	s := startServer(t, "test/e2e/testdata/Corefile.primary", kubeconfig,
		fmt.Sprintf("K8S_GATEWAY_SECONDARY1=127.0.0.1:%d", bindPort),
		fmt.Sprintf("K8S_GATEWAY_SECONDARY2=127.0.0.1:%d", knotPort))
	s.stop()
	bind := startBIND(t, "bind", bindPort, s.port)
	knot := startKnot(t, "knot", knotPort, s.port)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(bind.output(), "refresh: failure trying primary") || !strings.Contains(knot.output(), "refresh, failed") {
		if time.Now().After(deadline) {
			t.Fatalf("the secondaries did not try the stopped plugin:\nbind:\n%s\nknot:\n%s", bind.output(), knot.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// BIND keeps its failed refresh "in progress" for up to a second after
	// logging the failure; a NOTIFY then is only queued ("refresh check
	// queued") and, as observed with BIND 9.18, not acted upon when that
	// refresh fails. Start the plugin after that.
	time.Sleep(1500 * time.Millisecond)
	for round, what := range []string{"start", "restart"} {
		if round > 0 {
			s.stop()
			// The new serial is the time of the restart: a second later at least.
			time.Sleep(time.Second)
		}
		start := time.Now()
		s.start()
		took := waitSerial(t, s, start, 5*time.Second, bind, knot)
		t.Logf("plugin %s → serial %d on bind after %s, on knot after %s", what, soaSerial(s), took[0].Round(time.Millisecond), took[1].Round(time.Millisecond))
		// Every transfer followed a NOTIFY (there may be more than one
		// per round: objects of other tests' namespaces still being deleted
		// change the zone too).
		if n := notifiedTransfers(t, bind, 0, bindNotify, bindTransfer); n < round+1 {
			t.Errorf("bind: %d transfers, want %d at least", n, round+1)
		}
		if n := notifiedTransfers(t, knot, 0, knotNotify, knotTransfer); n < round+1 {
			t.Errorf("knot: %d transfers, want %d at least", n, round+1)
		}
	}
}

// digLines runs dig with args and returns its record lines (no comments).
func digLines(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command(digBin, append([]string{"+tries=1", "+time=5"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("dig %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var rrs []string
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, ";") {
			rrs = append(rrs, strings.Join(strings.Fields(line), " "))
		}
	}
	return rrs
}

// TestTransferAXFRAndIXFR: the zone dumped with dig AXFR passes
// named-checkzone; dig IXFR answers per RFC 1995: the single SOA for a
// current (or newer) serial, the whole zone for an older one that no
// transfer served (TestSecondariesScale checks the incremental IXFRs).
func TestTransferAXFRAndIXFR(t *testing.T) {
	// No secondary listens there: the NOTIFYs go nowhere.
	s := startServer(t, "test/e2e/testdata/Corefile.primary", kubeconfig,
		fmt.Sprintf("K8S_GATEWAY_SECONDARY1=127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("K8S_GATEWAY_SECONDARY2=127.0.0.1:%d", freePort(t)))
	nameserverService(t, "192.0.2.53", "2001:db8::53")
	ns := namespace(t)
	kubectl(t, fmt.Sprintf(webServiceYAML+`---
apiVersion: v1
kind: Service
metadata: {name: alias, namespace: %[1]s}
spec: {type: ExternalName, externalName: lb-1234.elb.example.net}
`, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "web", "192.0.2.30", "2001:db8::30")
	web := "web." + ns + ".example.com."
	s.eventually(t, 5*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.30"))
	s.eventually(t, 5*time.Second, "dns1.kube-system.example.com.", dns.TypeAAAA, positive("dns1.kube-system.example.com. 30 IN AAAA 2001:db8::53"))
	// Let the serial of the last change be published (at most a second).
	time.Sleep(1100 * time.Millisecond)

	at := []string{"@127.0.0.1", "-p", strconv.Itoa(s.port)}
	// A change between the AXFR and the IXFRs (objects of another test still
	// being deleted) moves the serial: then everything is done again.
	for attempt := 1; !checkAXFRAndIXFR(t, at, ns, web); attempt++ {
		if attempt == 5 {
			t.Fatal("the zone changed during each of 5 attempts")
		}
		t.Logf("the zone changed during the checks; again")
		time.Sleep(time.Second)
	}
}

// checkAXFRAndIXFR dumps the zone with dig AXFR, checks it with
// named-checkzone and asks IXFR from around its serial. It returns false,
// having checked nothing, when the serial changed meanwhile.
func checkAXFRAndIXFR(t *testing.T, at []string, ns, web string) bool {
	t.Helper()
	axfr := digLines(t, append(at, "example.com.", "AXFR")...)
	if len(axfr) < 3 || !strings.Contains(axfr[0], " SOA ") || axfr[0] != axfr[len(axfr)-1] {
		t.Fatalf("AXFR not framed by the SOA:\n%s", strings.Join(axfr, "\n"))
	}
	serial, err := strconv.ParseUint(fieldN(axfr[0], 6), 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	ixfr := func(from uint64) []string {
		return digLines(t, append(at, "example.com.", fmt.Sprintf("IXFR=%d", uint32(from)))...)
	}
	current, newer, older := ixfr(serial), ixfr(serial+1), ixfr(serial-1)
	if again := digLines(t, append(at, "example.com.", "AXFR")...); !slices.Equal(again, axfr) {
		return false
	}

	for _, want := range []string{
		"example.com. 30 IN NS dns1.kube-system.example.com.",
		"dns1.kube-system.example.com. 30 IN A 192.0.2.53",
		web + " 30 IN A 192.0.2.30",
		"_https._tcp." + web + " 30 IN SRV 0 100 443 " + web,
		"*.apps." + ns + ".example.com. 30 IN AAAA 2001:db8::30",
		"alias." + ns + ".example.com. 30 IN CNAME lb-1234.elb.example.net.",
	} {
		if !slices.Contains(axfr, want) {
			t.Errorf("AXFR lacks %q", want)
		}
	}
	zonefile := filepath.Join(t.TempDir(), "example.com.zone")
	if err := os.WriteFile(zonefile, []byte(strings.Join(axfr[:len(axfr)-1], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// -i local: integrity checks of in-zone data only (no lookups of other zones).
	out, err := exec.Command(sbin(t, "named-checkzone"), "-i", "local", "example.com", zonefile).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") {
		t.Errorf("named-checkzone: %v\n%s", err, out)
	}
	t.Logf("named-checkzone of the AXFR (%d records): %s", len(axfr)-1, strings.TrimSpace(string(out)))

	// RFC 1995: the single SOA for a current (or newer) serial; for an older
	// one that no transfer served the zone, AXFR-style.
	for _, got := range [][]string{current, newer} {
		if len(got) != 1 || got[0] != axfr[0] {
			t.Errorf("IXFR from serial %d or %d (current %d): %q, want the single SOA", serial, serial+1, serial, got)
		}
	}
	if !slices.Equal(older, axfr) {
		t.Errorf("IXFR=%d: not the whole zone:\n%s", serial-1, strings.Join(older, "\n"))
	}
	return true
}

// TestTransferRefused: the transfer plugin lets only the addresses of `to`
// transfer the zone; anyone else is REFUSED.
func TestTransferRefused(t *testing.T) {
	s := startServer(t, "test/e2e/testdata/Corefile.primary", kubeconfig,
		fmt.Sprintf("K8S_GATEWAY_SECONDARY1=127.0.0.2:%d", freePort(t)),
		fmt.Sprintf("K8S_GATEWAY_SECONDARY2=127.0.0.3:%d", freePort(t)))
	addr := fmt.Sprintf("127.0.0.1:%d", s.port)
	for _, qtype := range []uint16{dns.TypeAXFR, dns.TypeIXFR} {
		m := new(dns.Msg)
		if qtype == dns.TypeAXFR {
			m.SetAxfr("example.com.")
		} else {
			m.SetIxfr("example.com.", 1, "ns.example.com.", "hostmaster.example.com.")
		}
		c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
		r, _, err := c.Exchange(m, addr)
		if err != nil {
			t.Fatalf("%s from 127.0.0.1: %v", dns.TypeToString[qtype], err)
		}
		if r.Rcode != dns.RcodeRefused || len(r.Answer) != 0 {
			t.Errorf("%s from 127.0.0.1: %s with %d records, want REFUSED", dns.TypeToString[qtype], dns.RcodeToString[r.Rcode], len(r.Answer))
		}
	}
	out, _ := exec.Command(digBin, "@127.0.0.1", "-p", strconv.Itoa(s.port), "+tries=1", "+time=5", "example.com.", "AXFR").CombinedOutput()
	if !strings.Contains(string(out), "Transfer failed") {
		t.Errorf("dig AXFR from 127.0.0.1:\n%s", out)
	}
	// From an address that `to` names, the same request succeeds.
	got := digLines(t, "-b", "127.0.0.2", "@127.0.0.1", "-p", strconv.Itoa(s.port), "example.com.", "AXFR")
	if len(got) < 3 || !strings.Contains(got[0], " SOA ") || got[0] != got[len(got)-1] {
		t.Errorf("dig -b 127.0.0.2 AXFR:\n%s", strings.Join(got, "\n"))
	}
	// Ordinary queries are not restricted.
	s.eventually(t, time.Second, "example.com.", dns.TypeNS, positive("example.com. 30 IN NS dns1.kube-system.example.com."))
}

// TestTransferIXFRWithoutSOA: an IXFR request without the requester's SOA in
// its authority section (RFC 1995 §3 makes it mandatory) is FORMERR, from
// the plugin as from BIND serving the same zone; with the SOA, the same
// request transfers.
func TestTransferIXFRWithoutSOA(t *testing.T) {
	bindPort := freePort(t)
	s := startServer(t, "test/e2e/testdata/Corefile.primary", kubeconfig,
		fmt.Sprintf("K8S_GATEWAY_SECONDARY1=127.0.0.1:%d", bindPort),
		fmt.Sprintf("K8S_GATEWAY_SECONDARY2=127.0.0.3:%d", freePort(t)))
	nameserverService(t, "192.0.2.53")
	bind := startSecondaryReadable(t, "bind", bindPort, s.port)
	waitSerial(t, s, time.Now(), 20*time.Second, bind)
	ask := func(port int, ns []dns.RR) string {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion("example.com.", dns.TypeIXFR)
		m.Ns = ns
		c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
		r, _, err := c.Exchange(m, fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatal(err)
		}
		return dns.RcodeToString[r.Rcode]
	}
	a := &dns.A{Hdr: dns.RR_Header{Name: "example.com.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IPv4(192, 0, 2, 1)}
	for _, tc := range []struct {
		name string
		ns   []dns.RR
	}{{"no authority section", nil}, {"an A record in the authority section", []dns.RR{a}}} {
		plugin, reference := ask(s.port, tc.ns), ask(bindPort, tc.ns)
		if plugin != "FORMERR" || reference != "FORMERR" {
			t.Errorf("IXFR with %s: the plugin %s, BIND %s, want FORMERR", tc.name, plugin, reference)
		}
	}
	soa := &dns.SOA{Hdr: dns.RR_Header{Name: "example.com.", Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: "ns.", Mbox: "h.", Serial: 1}
	if got := ask(s.port, []dns.RR{soa}); got != "NOERROR" {
		t.Errorf("IXFR with the SOA: %s", got)
	}
}
