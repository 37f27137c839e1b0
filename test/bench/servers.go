package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// server is one DNS server process under test, pinned to the server CPU.
type server struct {
	name    string
	port    int
	cmd     *exec.Cmd
	out     *lockedBuffer
	started time.Time
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start runs argv pinned to cpu and returns the server. The process start
// time is taken just before the exec.
func start(name string, port int, cpu string, env []string, argv ...string) (*server, error) {
	s := &server{name: name, port: port, out: &lockedBuffer{}}
	s.cmd = exec.Command("taskset", append([]string{"-c", cpu}, argv...)...)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	s.started = time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// stop ends the server and waits for it.
func (s *server) stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// cpuTime returns the user plus system CPU time the process has used.
func (s *server) cpuTime() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// Fields after the parenthesized command name; utime and stime are the
	// 14th and 15th fields of the whole line.
	rest := string(b[bytes.LastIndexByte(b, ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat for %s", s.name)
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad /proc stat for %s", s.name)
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times, on Linux.
const clockTicks = 100

// rss returns the resident set size of the process in bytes.
func (s *server) rss() (int64, error) { return s.memory("VmRSS") }

// anonRSS returns the part of the resident set that is the process's own
// memory (heap, stacks): the rest is the binary's pages, shared and clean.
func (s *server) anonRSS() (int64, error) { return s.memory("RssAnon") }

// peakRSS returns the highest resident set size the process has had, in bytes.
func (s *server) peakRSS() (int64, error) { return s.memory("VmHWM") }

// memory returns a figure of /proc/PID/status in bytes.
func (s *server) memory(field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s for %s", field, s.name)
}

// waitAnswer polls until the server answers q with NOERROR and an answer
// (any NOERROR reply when qtype is TypeNone), and returns when it did.
func (s *server) waitAnswer(q string, qtype uint16, timeout time.Duration) (time.Time, error) {
	c := &dns.Client{Timeout: 200 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(q, max(qtype, dns.TypeA))
	deadline := time.Now().Add(timeout)
	for {
		r, _, err := c.Exchange(m, s.addr())
		if err == nil && r.Rcode == dns.RcodeSuccess && (len(r.Answer) > 0 || qtype == dns.TypeNone) {
			return time.Now(), nil
		}
		if s.cmd.ProcessState != nil || time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%s did not answer %s %s within %s (last error %v)\n%s",
				s.name, q, dns.TypeToString[qtype], timeout, err, tail(s.out.String(), 2000))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// servers knows how to start each server of the comparison.
type servers struct {
	work       string // scratch directory
	coredns    string // our build: cmd/coredns
	lean       string // stock CoreDNS with file and whoami: test/bench/coredns-lean
	knotd      string // empty when Knot is not installed
	kubeconfig string
	cpu        string // the CPU list servers are pinned to
	zone       string
	basePort   int
}

func (c *servers) writeFile(name, text string) (string, error) {
	path := filepath.Join(c.work, name)
	return path, os.WriteFile(path, []byte(text), 0o644)
}

// gateway starts our plugin, publishing the benchmark namespace's Ingresses
// and Services.
func (c *servers) gateway(ns string) (*server, error) {
	port := c.basePort
	conf, err := c.writeFile("Corefile.gateway", fmt.Sprintf(`%s:%d {
    bind 127.0.0.1
    k8s_gateway %s {
        kubeconfig %s
        resources Ingress Service
        namespaces %s
        ttl %d
    }
}
`, c.zone, port, c.zone, c.kubeconfig, ns, ttl))
	if err != nil {
		return nil, err
	}
	// gctrace: the garbage collector's CPU in each run (see gcCPU).
	return start("k8s_gateway", port, c.cpu, []string{"GODEBUG=gctrace=1"}, c.coredns, "-conf", conf)
}

func (c *servers) whoami() (*server, error) {
	port := c.basePort + 1
	conf, err := c.writeFile("Corefile.whoami", fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    whoami\n}\n", port))
	if err != nil {
		return nil, err
	}
	return start("CoreDNS whoami", port, c.cpu, []string{"GODEBUG=gctrace=1"}, c.lean, "-conf", conf)
}

func (c *servers) file(zoneFile string) (*server, error) {
	port := c.basePort + 2
	conf, err := c.writeFile("Corefile.file", fmt.Sprintf("%s:%d {\n    bind 127.0.0.1\n    file %s\n}\n", c.zone, port, zoneFile))
	if err != nil {
		return nil, err
	}
	return start("CoreDNS file", port, c.cpu, []string{"GODEBUG=gctrace=1"}, c.lean, "-conf", conf)
}

// knot starts knotd with one UDP worker. knotd pins its UDP workers to CPUs
// itself, starting at CPU 0, so the server CPU should be 0.
func (c *servers) knot(zoneFile string) (*server, error) {
	port := c.basePort + 3
	dir := filepath.Join(c.work, "knot")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	conf, err := c.writeFile("knot.conf", fmt.Sprintf(`server:
    rundir: "%[1]s"
    listen: 127.0.0.1@%[2]d
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
database:
    storage: "%[1]s"
log:
  - target: stderr
    any: warning
template:
  - id: default
    storage: "%[1]s"
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none
zone:
  - domain: %[3]s
    file: "%[4]s"
`, dir, port, c.zone, zoneFile))
	if err != nil {
		return nil, err
	}
	return start("Knot DNS", port, c.cpu, nil, c.knotd, "-c", conf)
}
