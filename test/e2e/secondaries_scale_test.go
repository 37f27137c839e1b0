//go:build e2e

package e2e

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestSecondariesScale: one primary feeding N secondaries (BIND and Knot in
// turn, each with test/e2e/testdata/secondaries/named.conf or knot.conf): each change
// of a Service's load balancer address reaches every secondary, which takes
// it by IXFR as a real difference. It measures, per change, the time from the
// API write to every secondary answering the new address, the bytes of the
// IXFR and of an AXFR of the zone, and the primary's CPU time.
//
// make test runs it small (four secondaries, two BIND and two Knot, three
// changes: a smoke test that asserts correctness only, with more than one
// secondary of each kind). hack/secondaries-bench.sh runs it larger through
// these variables, and prints the figures:
//
//	K8SGW_SCALE_SECONDARIES  N (4)
//	K8SGW_SCALE_CHANGES      changes measured (3)
//	K8SGW_SCALE_NAMES        other Services in the zone (20)
//	K8SGW_SCALE_BLACKHOLE    K NOTIFY targets that never answer (0), the first
//	                         listed first, the others spread among the secondaries
//	K8SGW_SCALE_BURST        changes written back to back after those (5)
//	K8SGW_SCALE_OUT          a file the figures are appended to, one line per run
func TestSecondariesScale(t *testing.T) {
	n, changes, names := envInt(t, "K8SGW_SCALE_SECONDARIES", 4), envInt(t, "K8SGW_SCALE_CHANGES", 3), envInt(t, "K8SGW_SCALE_NAMES", 20)
	blackholes, burst := envInt(t, "K8SGW_SCALE_BLACKHOLE", 0), envInt(t, "K8SGW_SCALE_BURST", 5)
	if n < 1 || n > 64 || changes < 1 || changes > 100 || names < 0 || names > 5000 || burst < 0 || burst > min(names, 100) || blackholes < 0 || blackholes > 64 {
		t.Fatalf("out of bounds: %d secondaries (1-64), %d changes (1-100), %d names (0-5000), burst %d (0-100, at most names), %d dead NOTIFY targets (0-64)", n, changes, names, burst, blackholes)
	}
	ports := make([]int, n)
	var to []string
	for i := range ports {
		ports[i] = freePort(t)
		to = append(to, fmt.Sprintf("127.0.0.1:%d", ports[i]))
	}
	// Dead targets: UDP sockets that never read (each NOTIFY to one times
	// out), the first listed first, the others spread among the secondaries.
	total := n + blackholes
	for k := range blackholes {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pc.Close() })
		to = slices.Insert(to, k*total/blackholes, pc.LocalAddr().String())
	}
	// Through the transfer plugin's NOTIFY, one target after another, each
	// dead one costs 3 tries of 2 s.
	notifyWait := 10*time.Second + time.Duration(blackholes)*6*time.Second
	dir := t.TempDir()
	corefile := filepath.Join(dir, "Corefile")
	writeFile(t, corefile, fmt.Sprintf(`example.com:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    transfer {
        to %s
    }
    k8s_gateway example.com {
        kubeconfig {$KUBECONFIG}
        apex dns1.kube-system
        ttl 30
    }
}
`, strings.Join(to, " ")))
	rel, err := filepath.Rel(repoRoot, corefile)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, rel, kubeconfig)
	nameserverService(t, "192.0.2.53")
	ns := namespace(t)
	if names > 0 {
		var b strings.Builder
		for i := range names {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: bg%d, namespace: %s}\nspec: {type: LoadBalancer, ports: [{port: 80}], externalIPs: [198.51.100.%d]}\n", i, ns, i%250+1)
		}
		kubectl(t, b.String(), "apply", "-f", "-")
	}
	lb := lbService(t, s, ns, "192.0.2.1")
	s.eventually(t, 10*time.Second, fmt.Sprintf("bg%d.%s.example.com.", names-1, ns), dns.TypeA, positive(fmt.Sprintf("bg%d.%s.example.com. 30 IN A 198.51.100.%d", names-1, ns, (names-1)%250+1)))

	peers := make([]*daemon, n)
	start := time.Now()
	for i, port := range ports {
		if i%2 == 0 {
			peers[i] = startBIND(t, fmt.Sprintf("bind%d", i), port, s.port)
		} else {
			peers[i] = startKnot(t, fmt.Sprintf("knot%d", i), port, s.port)
		}
	}
	took := waitSerial(t, s, start, 60*time.Second, peers...)
	t.Logf("%d secondaries started and transferred the zone in %s", n, slices.Max(took).Round(time.Millisecond))
	// The objects written within the second of the zone's last serial get
	// theirs on the next second: the secondaries take that one too before
	// the changes are measured.
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 20*time.Millisecond).Sub(now))
	waitSerial(t, s, time.Now(), notifyWait, peers...)
	// Knot's first IXFR after its AXFR; the logs are read from here on.
	logFrom := make([]int, n)
	for i, p := range peers {
		logFrom[i] = len(p.output())
	}

	// BIND counts the SOA of a transfer twice.
	_, _, zoneRecords := xfrSize(t, s.port, dns.TypeAXFR, 0)
	cpu0 := procCPU(t, s.Pid())
	var lat, plug, each []time.Duration
	var ixfrBytes, axfrBytes []int
	for c := 1; c <= changes; c++ {
		// A change on a second of its own, with every secondary current: its
		// serial is published at once (a change within the second of the
		// last serial waits for the next second, see docs/operations/benchmarks.md).
		if blackholes > 0 {
			// The NOTIFYs of the last serial (or of the start) may still be
			// on their way: through the transfer plugin, one target after
			// another, each dead one costing 3 tries of 2 s. Let them end,
			// so that each change is measured alone.
			time.Sleep(time.Duration(blackholes) * 6 * time.Second)
		}
		var before uint32
		for try := 0; ; try++ {
			now := time.Now()
			time.Sleep(now.Truncate(time.Second).Add(time.Second + 20*time.Millisecond).Sub(now))
			waitSerial(t, s, time.Now(), 10*time.Second, peers...)
			if before = soaSerial(s); before != uint32(time.Now().Unix()) || try == 10 {
				break
			}
		}
		ip := fmt.Sprintf("192.0.2.%d", c%250+2)
		want := positive(lb + " 30 IN A " + ip)
		t0 := time.Now()
		setLBStatus(t, ns, "service", "lb", ip)
		pluginAt, peerAt := waitEverywhere(t, s, peers, lb, want, t0, notifyWait)
		plug, lat, each = append(plug, pluginAt), append(lat, slices.Max(peerAt)), append(each, peerAt...)
		after := waitSerialChange(t, s, before)
		waitSerial(t, s, time.Now(), 10*time.Second, peers...)
		// What one secondary transfers for this change, and the zone's size.
		ib, incremental, _ := xfrSize(t, s.port, dns.TypeIXFR, before)
		if !incremental {
			t.Errorf("change %d: IXFR from %d to %d is not incremental", c, before, after)
		}
		ab, _, _ := xfrSize(t, s.port, dns.TypeAXFR, 0)
		ixfrBytes, axfrBytes = append(ixfrBytes, ib), append(axfrBytes, ab)
		t.Logf("change %d (serial %d → %d): the plugin answers after %s, every secondary after %s (first %s); IXFR %d bytes, AXFR %d bytes",
			c, before, after, ms(pluginAt), ms(slices.Max(peerAt)), ms(slices.Min(peerAt)), ib, ab)
	}
	cpu := procCPU(t, s.Pid()) - cpu0
	sameAnswers(t, s, peers[:min(n, 2)], []question{{lb, dns.TypeA}, {"example.com.", dns.TypeSOA}, {"example.com.", dns.TypeNS}, {"nothing." + ns + ".example.com.", dns.TypeA}})

	// Every secondary took the changes by IXFR, never by a whole zone.
	for i, p := range peers {
		ixfrs, axfrs, _ := transfersLogged(p.name, p.output()[logFrom[i]:], zoneRecords)
		if axfrs > 0 || ixfrs == 0 {
			t.Errorf("%s: %d IXFRs, %d AXFRs after the first transfer, want IXFRs only:\n%s", p.name, ixfrs, axfrs, p.output()[logFrom[i]:])
		}
		logFrom[i] = len(p.output())
	}

	// A burst: changes of other Services written back to back. Changes within
	// one second share a serial, and a secondary that transferred in the
	// middle of one may get a whole zone (ixfr.go); every secondary ends
	// with the plugin's data.
	burstLine := "burst=0"
	if burst > 0 {
		start := soaSerial(s)
		t0 := time.Now()
		for i := range burst {
			setLBStatus(t, ns, "service", fmt.Sprintf("bg%d", i), fmt.Sprintf("203.0.113.%d", i+1))
		}
		written := time.Since(t0)
		last := fmt.Sprintf("bg%d.%s.example.com.", burst-1, ns)
		_, peerAt := waitEverywhere(t, s, peers, last, positive(fmt.Sprintf("%s 30 IN A 198.51.100.%d", last, (burst-1)%250+1), fmt.Sprintf("%s 30 IN A 203.0.113.%d", last, burst)), time.Now(), notifyWait)
		waitSerial(t, s, time.Now(), notifyWait, peers...)
		sameAnswers(t, s, peers[:min(n, 2)], []question{{fmt.Sprintf("bg0.%s.example.com.", ns), dns.TypeA}, {last, dns.TypeA}, {"example.com.", dns.TypeSOA}})
		var ixfrs, axfrs, bytes int
		for i, p := range peers {
			ix, ax, b := transfersLogged(p.name, p.output()[logFrom[i]:], zoneRecords)
			ixfrs, axfrs, bytes = ixfrs+ix, axfrs+ax, bytes+b
		}
		burstLine = fmt.Sprintf("burst=%d burst_write_ms=%d burst_after_ms=%d burst_serials=%d burst_ixfr=%d burst_axfr=%d burst_bytes_per_secondary=%d",
			burst, written.Milliseconds(), slices.Max(peerAt).Milliseconds(), soaSerial(s)-start, ixfrs, axfrs, bytes/n)
		t.Logf("burst of %d changes written in %s: every secondary had the last %s after the last write; %d serials; %d IXFRs and %d AXFRs received, %d bytes per secondary",
			burst, ms(written), ms(slices.Max(peerAt)), soaSerial(s)-start, ixfrs, axfrs, bytes/n)
	}

	summary := fmt.Sprintf("secondaries=%d bind=%d knot=%d blackhole=%d names=%d changes=%d p50_ms=%d max_ms=%d each_p50_ms=%d plugin_p50_ms=%d ixfr_bytes=%d axfr_bytes=%d cpu_ms_per_change=%d %s",
		n, (n+1)/2, n/2, blackholes, names+2, changes, percentile(lat, 50).Milliseconds(), slices.Max(lat).Milliseconds(), percentile(each, 50).Milliseconds(),
		percentile(plug, 50).Milliseconds(), medianInt(ixfrBytes), medianInt(axfrBytes), cpu.Milliseconds()/int64(changes), burstLine)
	t.Log(summary)
	if out := os.Getenv("K8SGW_SCALE_OUT"); out != "" {
		f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(f, summary)
		f.Close()
	}
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

// waitEverywhere polls the plugin and every secondary (each in its own
// goroutine) until each answers want, and returns how long after t0 the
// plugin did and each secondary did.
func waitEverywhere(t *testing.T, s *server, peers []*daemon, name string, want expectation, t0 time.Time, timeout time.Duration) (time.Duration, []time.Duration) {
	t.Helper()
	srvs := []*server{s}
	for _, p := range peers {
		srvs = append(srvs, p.server)
	}
	at := make([]time.Duration, len(srvs))
	var wg sync.WaitGroup
	for i, srv := range srvs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(t0) < timeout {
				if r, err := srv.query(name, dns.TypeA); err == nil && want.check(r) == nil {
					at[i] = time.Since(t0)
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	for i, d := range at {
		if d == 0 {
			who := "the plugin"
			if i > 0 {
				who = peers[i-1].name
			}
			t.Fatalf("%s does not answer %s %v after %s", who, name, want, timeout)
		}
	}
	return at[0], at[1:]
}

// waitSerialChange waits until the plugin's serial is no longer before.
func waitSerialChange(t *testing.T, s *server, before uint32) uint32 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if got := soaSerial(s); got != 0 && got != before {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("serial still %d after 5s", before)
	return 0
}

// xfrSize asks the plugin for an AXFR, or an IXFR from serial, over TCP and
// returns the bytes of the answer on the wire (length prefixes included),
// whether it is an incremental IXFR (a second SOA right after the first), and
// its number of records.
func xfrSize(t *testing.T, port int, qtype uint16, serial uint32) (int, bool, int) {
	t.Helper()
	m := new(dns.Msg)
	if qtype == dns.TypeIXFR {
		m.SetIxfr("example.com.", serial, "dns1.kube-system.example.com.", "hostmaster.example.com.")
	} else {
		m.SetAxfr("example.com.")
	}
	q, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(q))), q...)); err != nil {
		t.Fatal(err)
	}
	var rrs []dns.RR
	size := 0
	for {
		var l [2]byte
		if _, err := io.ReadFull(conn, l[:]); err != nil {
			t.Fatalf("%s after %d records: %v", dns.TypeToString[qtype], len(rrs), err)
		}
		buf := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(conn, buf); err != nil {
			t.Fatal(err)
		}
		size += 2 + len(buf)
		r := new(dns.Msg)
		if err := r.Unpack(buf); err != nil || r.Rcode != dns.RcodeSuccess {
			t.Fatalf("%s: %v %v", dns.TypeToString[qtype], err, r)
		}
		rrs = append(rrs, r.Answer...)
		if xfrDone(rrs, qtype) {
			_, incremental := rrs[1].(*dns.SOA)
			return size, len(rrs) > 1 && incremental, len(rrs)
		}
	}
}

// xfrDone reports whether rrs is a whole transfer: the single SOA of an
// IXFR, or ended by the SOA of the first record a second time (AXFR) or a
// third (IXFR).
func xfrDone(rrs []dns.RR, qtype uint16) bool {
	first, ok := rrs[0].(*dns.SOA)
	if !ok || len(rrs) == 1 {
		return ok && qtype == dns.TypeIXFR
	}
	last, ok := rrs[len(rrs)-1].(*dns.SOA)
	if !ok || last.Serial != first.Serial {
		return false
	}
	if _, incremental := rrs[1].(*dns.SOA); !incremental {
		return true
	}
	n := 0
	for _, rr := range rrs {
		if soa, ok := rr.(*dns.SOA); ok && soa.Serial == first.Serial {
			n++
		}
	}
	return n >= 3
}

// Transfers in the secondaries' logs. Knot names the kind it received (an
// IXFR answered with the whole zone ends as an AXFR); BIND only counts the
// records: an incremental IXFR of a few changes has fewer than the zone
// (zoneRecords counts its SOA twice, as BIND does).
var (
	bindDone = regexp.MustCompile(`transfer of 'example\.com/IN' from .*: Transfer completed: \d+ messages, (\d+) records, (\d+) bytes`)
	knotDone = regexp.MustCompile(`\[example\.com\.\] (IXFR|AXFR), incoming, remote [^,]+, finished, .* (\d+) bytes`)
)

// transfersLogged counts the IXFRs and AXFRs a secondary logged, for a zone
// of zoneRecords records, and the bytes they brought.
func transfersLogged(name, log string, zoneRecords int) (ixfrs, axfrs, bytes int) {
	for _, line := range strings.Split(log, "\n") {
		if m := knotDone.FindStringSubmatch(line); m != nil && strings.HasPrefix(name, "knot") {
			b, _ := strconv.Atoi(m[2])
			bytes += b
			if m[1] == "AXFR" {
				axfrs++
			} else {
				ixfrs++
			}
		}
		if m := bindDone.FindStringSubmatch(line); m != nil && !strings.HasPrefix(name, "knot") {
			records, _ := strconv.Atoi(m[1])
			b, _ := strconv.Atoi(m[2])
			bytes += b
			if records >= zoneRecords {
				axfrs++
			} else {
				ixfrs++
			}
		}
	}
	return ixfrs, axfrs, bytes
}

// procCPU returns the user and system CPU time of process pid so far.
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// After the command name in parentheses: field 14 utime, 15 stime (in ticks of 1/100 s).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func medianInt(xs []int) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
