//go:build e2e

package e2e

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
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

// The hostile-client benchmark (make bench-hostile, hack/bench-hostile.sh):
// forged UPDATE messages (a key's right name, a wrong MAC) of 512 B, 16 KB
// and 64 KB, sent as fast as one client can over UDP and over TCP (a
// connection each), while dnsperf measures normal queries; then 100 forged
// 64 KB messages a second against the same dnsperf run without them; then
// signed updates over TCP while 64 connections without a key, from 8
// addresses, hold what they can (acme_unproven_test.go). It prints the
// server's CPU per forged message, the query rates and how long a signed
// update took; in `make test` it runs as a smoke of a fraction of a second
// per step and asserts no speed, only that every forged message is refused
// and nothing is written, and the bound of TestACMEHostileUnprovenTCP.
//
// K8SGW_HOSTILE_ROUNDS (default 1), K8SGW_HOSTILE_SECONDS (default 0.3) and
// K8SGW_HOSTILE_OUT (a file the Markdown table is written to) set a real run.

// hostileSizes are the sizes of the forged messages; "64 KB" is the largest
// UDP payload that fits a loopback datagram, about.
var hostileSizes = []int{512, 16 << 10, 65000}

// forgedUpdate returns an UPDATE of zone of about size bytes, signed with
// k's name and a secret that is not k's.
func forgedUpdate(t *testing.T, zone string, k tsigKey, size int) []byte {
	t.Helper()
	build := func(fill int) []byte {
		m := new(dns.Msg)
		m.SetUpdate(zone)
		var strs []string
		for fill > 0 {
			n := min(fill, 255)
			strs = append(strs, strings.Repeat("f", n))
			fill -= n + 1
		}
		m.Insert([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: "_acme-challenge.forged." + zone, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: strs}})
		m.SetTsig(k.name, dns.CanonicalName(k.alg), 300, time.Now().Unix())
		wire, _, err := dns.TsigGenerate(m, "Zm9yZ2VkLXNlY3JldC1vZi0zMi1ieXRlcy1sb25nISE=", "", false)
		if err != nil {
			t.Fatal(err)
		}
		return wire
	}
	base := len(build(1))
	wire := build(size - base)
	if d := len(wire) - size; d > 0 {
		wire = build(size - base - d)
	}
	return wire
}

// floodResult is what one client saw.
type floodResult struct {
	sent, replies int
	rcodes        map[int]int
}

// flood sends msg to addr over netw for d, as fast as it can (rate 0) or at
// rate messages a second, and counts the replies and their rcodes.
func flood(t *testing.T, netw, addr string, msg []byte, d time.Duration, rate int) floodResult {
	t.Helper()
	res := floodResult{rcodes: map[int]int{}}
	var mu sync.Mutex
	count := func(b []byte) {
		if len(b) < 12 {
			return
		}
		mu.Lock()
		res.replies++
		res.rcodes[int(b[3]&0xF)]++
		mu.Unlock()
	}
	deadline := time.Now().Add(d)
	var tick <-chan time.Time
	if rate > 0 {
		tk := time.NewTicker(time.Second / time.Duration(rate))
		defer tk.Stop()
		tick = tk.C
	}
	pace := func() {
		if tick != nil {
			<-tick
		}
	}
	if netw == "udp" {
		conn, err := net.Dial("udp", addr)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 65535)
			for {
				_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
				n, err := conn.Read(buf)
				if err != nil {
					if time.Now().After(deadline) {
						return
					}
					continue
				}
				count(buf[:n])
			}
		}()
		for time.Now().Before(deadline) {
			pace()
			if _, err := conn.Write(msg); err == nil {
				res.sent++
			}
		}
		<-done
		conn.Close()
		return res
	}
	// TCP: a connection per message: the server answers a connection whose
	// first message proves no key, then closes it.
	framed := binary.BigEndian.AppendUint16(nil, uint16(len(msg))) // #nosec G115
	framed = append(framed, msg...)
	buf := make([]byte, 65535)
	for time.Now().Before(deadline) {
		pace()
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			continue
		}
		_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := conn.Write(framed); err == nil {
			res.sent++
			var size [2]byte
			if _, err := io.ReadFull(conn, size[:]); err == nil {
				n := int(binary.BigEndian.Uint16(size[:]))
				if _, err := io.ReadFull(conn, buf[:n]); err == nil {
					count(buf[:n])
				}
			}
		}
		conn.Close()
	}
	return res
}

// processCPU returns the CPU time (user and system) of s's process so far.
func processCPU(t *testing.T, s *server) time.Duration {
	t.Helper()
	pid := s.Pid()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command's closing parenthesis: utime and stime
	// are the 12th and 13th of them, in clock ticks (100 a second).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// dnsperfRun runs dnsperf against s's DNS port for d over the queries in
// file and returns the queries per second, in the background: wait gives it.
func dnsperfRun(t *testing.T, s *server, file string, d time.Duration) (wait func() float64) {
	t.Helper()
	cmd := exec.Command("dnsperf", "-s", "127.0.0.1", "-p", strconv.Itoa(s.port), "-d", file,
		"-c", "2", "-q", "50", "-l", strconv.FormatFloat(d.Seconds(), 'f', 2, 64))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("dnsperf: %v", err)
	}
	return func() float64 {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("dnsperf: %v\n%s", err, out.String())
		}
		m := regexp.MustCompile(`Queries per second:\s+(\S+)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("dnsperf printed no rate:\n%s", out.String())
		}
		q, _ := strconv.ParseFloat(m[1], 64)
		return q
	}
}

func envNumber(t *testing.T, name string, def float64) float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return f
}

// TestACMEHostileClients is the hostile-client benchmark (a smoke of it by
// default; see above).
func TestACMEHostileClients(t *testing.T) {
	rounds := int(envNumber(t, "K8SGW_HOSTILE_ROUNDS", 1))
	d := time.Duration(envNumber(t, "K8SGW_HOSTILE_SECONDS", 0.3) * float64(time.Second))
	a := acmeSetup(t)
	s := a.s
	queries := filepath.Join(t.TempDir(), "queries")
	if err := os.WriteFile(queries, []byte("www."+a.domainA+" A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", s.updatePort(t))
	metricsPort := 0
	for _, e := range a.env {
		if v, ok := strings.CutPrefix(e, "ACME_METRICS_PORT="); ok {
			metricsPort, _ = strconv.Atoi(v)
		}
	}
	// handled counts the forged messages the server refused (read and
	// answered; a UDP message the kernel or a full worker pool dropped is not).
	handled := func() float64 {
		return metric(t, metricsPort, "coredns_k8s_gateway_update_rejected_total", `reason="badsig"`) +
			metric(t, metricsPort, "coredns_k8s_gateway_update_rejected_total", `reason="size"`)
	}

	type key struct {
		netw string
		size int
	}
	cpu := map[key][]float64{}  // µs of server CPU per forged message
	rate := map[key][]float64{} // forged messages answered a second
	qps := map[key][]float64{}  // dnsperf's rate during the flood
	var base, fixed, ratio []float64
	var signedTook, signedAlone []time.Duration // signed updates under unproven connections, and without
	for round := range rounds {
		base = append(base, dnsperfRun(t, s, queries, d)())
		for _, netw := range []string{"udp", "tcp"} {
			for _, size := range hostileSizes {
				k := key{netw, size}
				msg := forgedUpdate(t, a.zone, a.coreA, size)
				before, counted := processCPU(t, s), handled()
				res := flood(t, netw, addr, msg, d, 0)
				used, refused := processCPU(t, s)-before, handled()-counted
				if res.replies == 0 {
					t.Fatalf("%s %d B: no reply to %d forged messages", netw, size, res.sent)
				}
				want := dns.RcodeRefused // refused on its size, before any MAC
				if len(msg) <= 4096 {
					want = dns.RcodeNotAuth // BADSIG
				}
				if res.rcodes[want] != res.replies {
					t.Errorf("%s %d B: rcodes %v, want only %s", netw, size, res.rcodes, dns.RcodeToString[want])
				}
				if refused < float64(res.replies) {
					t.Errorf("%s %d B: %d replies but %.0f refusals counted", netw, size, res.replies, refused)
				}
				cpu[k] = append(cpu[k], float64(used.Microseconds())/refused)
				rate[k] = append(rate[k], refused/d.Seconds())
				// Again, with dnsperf beside.
				wait := dnsperfRun(t, s, queries, d)
				flood(t, netw, addr, msg, d, 0)
				qps[k] = append(qps[k], wait())
				t.Logf("round %d %s %6d B: %d sent, %.0f refused, %d replies read, %.1f µs CPU each, %.0f refused/s; dnsperf %.0f q/s (alone %.0f)",
					round, netw, len(msg), res.sent, refused, res.replies, cpu[k][round], rate[k][round], qps[k][round], base[round])
			}
		}
		// A fixed rate: 100 forged 64 KB messages a second.
		msg := forgedUpdate(t, a.zone, a.coreA, hostileSizes[len(hostileSizes)-1])
		alone := dnsperfRun(t, s, queries, d)()
		wait := dnsperfRun(t, s, queries, d)
		flood(t, "udp", addr, msg, d, 100)
		under := wait()
		fixed = append(fixed, under)
		ratio = append(ratio, under/alone)
		t.Logf("round %d: dnsperf %.0f q/s alone, %.0f q/s under 100 forged 64 KB messages a second (%.2f)", round, alone, under, under/alone)
		quiet, _ := signedUpdates(t, a, addr, 5)
		signedAlone = append(signedAlone, quiet...)
		took := signedUnderUnproven(t, a, addr, 5)
		if worst := slices.Max(took); worst > unprovenBound {
			t.Errorf("round %d: a signed update took %s under %d unproven connections, want at most %s", round, worst.Round(time.Millisecond), unprovenConns, unprovenBound)
		}
		signedTook = append(signedTook, took...)
	}
	if got := endpointTargets(t, a.nsA); len(got) != 0 {
		t.Errorf("forged messages wrote %q", got)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "| transport | size | server CPU per forged message (min / median) | forged messages refused a second (median) | dnsperf q/s during the flood (median) |\n| --- | --- | --- | --- | --- |\n")
	for _, netw := range []string{"udp", "tcp"} {
		for _, size := range hostileSizes {
			k := key{netw, size}
			fmt.Fprintf(&b, "| %s | %d B | %.1f / %.1f µs | %.0f | %.0f |\n", strings.ToUpper(netw), size, slices.Min(cpu[k]), median(cpu[k]), median(rate[k]), median(qps[k]))
		}
	}
	fmt.Fprintf(&b, "\ndnsperf alone: %.0f q/s (median of %d); under 100 forged 64 KB messages a second: %.0f q/s, ratio min %.2f, median %.2f\n",
		median(base), rounds, median(fixed), slices.Min(ratio), median(ratio))
	fmt.Fprintf(&b, "\nsigned update over TCP under %d connections without a key from %d addresses (%d updates): min %s, median %s, max %s; without them: min %s, median %s, max %s\n",
		unprovenConns, unprovenAddrs, len(signedTook), slices.Min(signedTook).Round(time.Microsecond), medianDuration(signedTook).Round(time.Microsecond), slices.Max(signedTook).Round(time.Microsecond),
		slices.Min(signedAlone).Round(time.Microsecond), medianDuration(signedAlone).Round(time.Microsecond), slices.Max(signedAlone).Round(time.Microsecond))
	t.Log("\n" + b.String())
	if out := os.Getenv("K8SGW_HOSTILE_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
