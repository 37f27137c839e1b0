package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// load is what dnsperf is asked to do.
type load struct {
	dnsperf   string
	cpu       string // CPU list dnsperf is pinned to
	queries   string // data file
	clients   int    // dnsperf -c
	inflight  int    // dnsperf -q
	duration  time.Duration
	rate      int           // dnsperf -Q for the latency runs
	latencyOf time.Duration // duration of a latency run
	extra     []string      // more dnsperf arguments (an EDNS option)
}

// throughput is one saturating dnsperf run.
type throughput struct {
	qps       float64
	completed int
	lost      int
	cpuPerQ   time.Duration // server CPU per completed query
	gcShare   float64       // of the server's CPU, the garbage collector's (Go servers with gctrace only)
}

// latency is one fixed-rate dnsperf run.
type latency struct {
	p50, p99 time.Duration
	lost     int
}

// saturate runs dnsperf against s as fast as it answers.
func (l *load) saturate(s *server) (throughput, error) {
	before, err := s.cpuTime()
	if err != nil {
		return throughput{}, err
	}
	logged := len(s.out.String())
	out, err := l.dnsperfRun(s, "-c", strconv.Itoa(l.clients), "-q", strconv.Itoa(l.inflight),
		"-l", seconds(l.duration))
	if err != nil {
		return throughput{}, err
	}
	after, err := s.cpuTime()
	if err != nil {
		return throughput{}, err
	}
	var t throughput
	t.qps = statFloat(out, "Queries per second:")
	t.completed = int(statFloat(out, "Queries completed:"))
	t.lost = int(statFloat(out, "Queries lost:"))
	if t.completed == 0 {
		return t, fmt.Errorf("dnsperf against %s completed no queries:\n%s", s.name, out)
	}
	t.cpuPerQ = (after - before) / time.Duration(t.completed)
	if after > before {
		t.gcShare = float64(gcCPU(s.out.String()[logged:])) / float64(after-before)
	}
	return t, nil
}

// gcCPU sums the CPU time of the garbage collections that the Go runtime
// traced (GODEBUG=gctrace=1) in out: per collection, the "ms cpu" figures
// (stop-the-world sweep termination, mark assist, background and idle
// marking, mark termination).
func gcCPU(out string) time.Duration {
	var total float64
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "gc ") {
			continue
		}
		for _, part := range strings.Split(line, ", ") {
			figures, ok := strings.CutSuffix(part, " ms cpu")
			if !ok {
				continue
			}
			for _, f := range strings.FieldsFunc(figures, func(r rune) bool { return r == '+' || r == '/' }) {
				if v, err := strconv.ParseFloat(f, 64); err == nil {
					total += v
				}
			}
		}
	}
	return time.Duration(total * float64(time.Millisecond))
}

// measureLatency runs dnsperf at a fixed rate well below capacity and
// returns the median and 99th percentile of the per-query latencies.
func (l *load) measureLatency(s *server) (latency, error) {
	out, err := l.dnsperfRun(s, "-c", "1", "-q", strconv.Itoa(l.inflight),
		"-Q", strconv.Itoa(l.rate), "-l", seconds(l.latencyOf), "-v")
	if err != nil {
		return latency{}, err
	}
	var ds []time.Duration
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "> ") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			continue
		}
		ds = append(ds, time.Duration(v*float64(time.Second)))
	}
	if len(ds) == 0 {
		return latency{}, fmt.Errorf("dnsperf -v against %s reported no latencies:\n%s", s.name, tail(string(out), 2000))
	}
	slices.Sort(ds)
	return latency{
		p50:  ds[len(ds)/2],
		p99:  ds[min(len(ds)-1, len(ds)*99/100)],
		lost: int(statFloat(out, "Queries lost:")),
	}, nil
}

func (l *load) dnsperfRun(s *server, args ...string) ([]byte, error) {
	argv := append([]string{"-c", l.cpu, l.dnsperf, "-s", "127.0.0.1", "-p", strconv.Itoa(s.port), "-d", l.queries}, l.extra...)
	argv = append(argv, args...)
	cmd := exec.Command("taskset", argv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("dnsperf against %s: %v\n%s", s.name, err, tail(string(out), 2000))
	}
	return out, nil
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// statFloat returns the first number after label in dnsperf's statistics.
func statFloat(out []byte, label string) float64 {
	i := bytes.Index(out, []byte(label))
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(out[i+len(label):]))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
