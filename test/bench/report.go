package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

// sizeResult is everything measured at one number of names.
type sizeResult struct {
	n            int
	layout       layout // the objects that publish the names
	created      int
	populate     time.Duration
	sync         time.Duration // process start to the last name answered
	published    string        // the plugin's own log line about it
	rssSynced    int64         // a second after the last name was answered
	anonSynced   int64         // the anonymous part of rssSynced (RssAnon)
	rssPeak      int64         // the highest resident size until then (VmHWM)
	wrong        int
	servers      []serverResult // ours first
	fresh        freshness
	churn        throughput
	churnLatency latency
	churnRate    float64 // status updates per second achieved
	churnFresh   freshness
}

// serverResult is one server's rounds at one size.
type serverResult struct {
	name string
	tp   []throughput
	lat  []latency
	rss  int64 // after the rounds
	anon int64 // the anonymous part of rss (RssAnon): heap and stacks, not the binary's pages
}

func (s serverResult) qps() float64 {
	return median(s.tp, func(t throughput) float64 { return t.qps })
}

func (s serverResult) cpu() float64 {
	return median(s.tp, func(t throughput) float64 { return micros(t.cpuPerQ) })
}

func (s serverResult) gc() float64 {
	return median(s.tp, func(t throughput) float64 { return t.gcShare })
}

func (s serverResult) p50() float64 {
	return median(s.lat, func(l latency) float64 { return micros(l.p50) })
}

func (s serverResult) p99() float64 {
	return median(s.lat, func(l latency) float64 { return micros(l.p99) })
}

func median[T any](xs []T, f func(T) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func (r *sizeResult) server(prefix string) *serverResult {
	for i := range r.servers {
		if strings.HasPrefix(r.servers[i].name, prefix) {
			return &r.servers[i]
		}
	}
	return nil
}

// report renders the results as markdown.
type report struct {
	opts    options
	started time.Time
	sizes   []*sizeResult
}

var publishedRE = regexp.MustCompile(`published (\d+) names ([0-9.]+[µnm]?s) after`)

// publishDelay returns the plugin's own figure for building its first snapshot.
func (r *sizeResult) publishDelay() (time.Duration, bool) {
	m := publishedRE.FindStringSubmatch(r.published)
	if m == nil {
		return 0, false
	}
	d, err := time.ParseDuration(m[2])
	return d, err == nil
}

func (rep *report) markdown() string {
	var b bytes.Buffer
	o := rep.opts
	fmt.Fprintf(&b, "Measured %s on %s: %d cores (%s), Linux %s, %s; %s; %s.\n",
		rep.started.UTC().Format("2006-01-02"), hostname(), cpuCount(), cpuModel(), kernel(),
		runtime.Version(), firstLine("dnsperf", "-h"), knotVersion(o.knotd))
	fmt.Fprintf(&b, "Servers pinned to CPU %s, dnsperf and the control plane to CPU %s. "+
		"Each figure is the median of %d interleaved rounds; a throughput run lasts %s (dnsperf -c %d -q %d), "+
		"a latency run %s at %d queries/s. Query mix: 80%% A of existing names, 10%% AAAA of existing names (NODATA), 10%% NXDOMAIN.\n\n",
		o.serverCPU, o.clientCPU, o.rounds, o.load.duration, o.load.clients, o.load.inflight, o.load.latencyOf, o.load.rate)

	b.WriteString("### Throughput, CPU and latency (`make bench`)\n\n")
	b.WriteString("| names | server | QPS | server CPU µs/query | p50 µs | p99 µs | QPS ÷ whoami | QPS ÷ file | CPU ÷ whoami | resident MiB after the rounds | of it anonymous MiB |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rep.sizes {
		who, file := r.server("CoreDNS whoami"), r.server("CoreDNS file")
		for _, s := range r.servers {
			fmt.Fprintf(&b, "| %d | %s | %.0f | %.1f | %.0f | %.0f | %s | %s | %s | %.1f | %.1f |\n",
				r.n, s.name, s.qps(), s.cpu(), s.p50(), s.p99(),
				ratio(s.qps(), who.qps()), ratio(s.qps(), file.qps()), ratio(s.cpu(), who.cpu()), mib(s.rss), mib(s.anon))
		}
	}

	b.WriteString("\n### k8s_gateway: memory, sync and freshness (`make bench`)\n\n")
	b.WriteString("| names | objects | resident MiB after sync | of it anonymous MiB | peak resident MiB during sync | start → all answered | first snapshot (plugin log) | freshness median / max | under churn: updates/s, QPS, p99 µs, freshness median / max |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rep.sizes {
		pub := "n/a"
		if d, ok := r.publishDelay(); ok {
			pub = d.Round(time.Millisecond).String()
		}
		fmt.Fprintf(&b, "| %d | %d | %.1f | %.1f | %.1f | %s | %s | %s / %s | %.0f, %.0f, %.0f, %s / %s |\n",
			r.n, r.layout.objects(), mib(r.rssSynced), mib(r.anonSynced), mib(r.rssPeak), r.sync.Round(time.Millisecond), pub,
			ms(r.fresh.median), ms(r.fresh.max), r.churnRate, r.churn.qps, micros(r.churnLatency.p99),
			ms(r.churnFresh.median), ms(r.churnFresh.max))
	}
	b.WriteString("\nFreshness (`make bench`) is the time from the API server's reply to a status patch until the new address is answered. " +
		"Of that, the API server's own share, when a watch of the benchmark tool saw the change, was (median / max) ")
	for i, r := range rep.sizes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s / %s at %d names (under churn %s / %s)", ms(r.fresh.watchMedian), ms(r.fresh.watchMax), r.n,
			ms(r.churnFresh.watchMedian), ms(r.churnFresh.watchMax))
	}
	b.WriteString(". From before the patch is sent, freshness is (median) ")
	for i, r := range rep.sizes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s at %d names", ms(r.fresh.medianWrite), r.n)
	}
	b.WriteString(".\n")
	rep.targets(&b)
	return b.String()
}

// targets compares the results with the targets of
// docs/operations/benchmarks.md. The update cost and the garbage collector's share
// are measured apart (go test -bench), not here.
func (rep *report) targets(b *bytes.Buffer) {
	b.WriteString("\n### Targets (`make bench`)\n\n| target | measured | met |\n|---|---|:-:|\n")
	row := func(target, measured string, ok bool) {
		mark := "no"
		if ok {
			mark = "yes"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", target, measured, mark)
	}
	for _, r := range rep.sizes {
		gw, who := &r.servers[0], r.server("CoreDNS whoami")
		row(fmt.Sprintf("%d names: QPS ≥ 0.95 × whoami", r.n),
			fmt.Sprintf("%s × whoami", ratio(gw.qps(), who.qps())), gw.qps() >= 0.95*who.qps())
		row(fmt.Sprintf("%d names: CPU per query ≤ 1.05 × whoami", r.n),
			fmt.Sprintf("%.1f µs vs %.1f µs", gw.cpu(), who.cpu()), gw.cpu() <= 1.05*who.cpu())
		row(fmt.Sprintf("%d names: p99 at %d/s ≤ 1.2 × whoami's", r.n, rep.opts.load.rate),
			fmt.Sprintf("%.0f µs vs %.0f µs", gw.p99(), who.p99()), gw.p99() <= 1.2*who.p99())
		row(fmt.Sprintf("%d names: freshness ≤ 5 ms median, also under churn", r.n),
			fmt.Sprintf("%s; churn %s", ms(r.fresh.median), ms(r.churnFresh.median)),
			r.fresh.median <= 5*time.Millisecond && r.churnFresh.median <= 5*time.Millisecond)
		row(fmt.Sprintf("%d names: garbage collection ≤ 2%% of the CPU under saturating load", r.n),
			fmt.Sprintf("%.1f%% (whoami %.1f%%, file %.1f%%)", 100*gw.gc(), 100*who.gc(), 100*r.server("CoreDNS file").gc()), gw.gc() <= 0.02)
		row(fmt.Sprintf("%d names: peak resident during sync ≤ 1.5 × steady", r.n),
			fmt.Sprintf("%.1f MiB vs %.1f MiB", mib(r.rssPeak), mib(r.rssSynced)), r.rssPeak*2 <= r.rssSynced*3)
		if r.n == 10000 {
			row("10000 names: resident ≤ 45 MiB", fmt.Sprintf("%.1f MiB (%.1f MiB anonymous)", mib(r.rssSynced), mib(r.anonSynced)), r.rssSynced <= 45<<20)
		}
		if r.n >= 1000000 || r.layout.objects() >= 100000 {
			row(fmt.Sprintf("%d names, %d objects: start → every name answered ≤ 10 s", r.n, r.layout.objects()),
				r.sync.Round(time.Millisecond).String(), r.sync <= 10*time.Second)
		}
	}
	if len(rep.sizes) > 1 {
		lo, hi := rep.sizes[0], rep.sizes[len(rep.sizes)-1]
		row(fmt.Sprintf("QPS flat within 5%% from %d to %d names", lo.n, hi.n),
			fmt.Sprintf("%.0f → %.0f", lo.servers[0].qps(), hi.servers[0].qps()),
			hi.servers[0].qps() >= 0.95*lo.servers[0].qps())
		perName := float64(hi.rssSynced-lo.rssSynced) / float64(hi.n-lo.n)
		row(fmt.Sprintf("≤ 0.5 KiB resident per added name (%d → %d names)", lo.n, hi.n),
			fmt.Sprintf("%.0f bytes", perName), perName <= 512)
		if rep.opts.singleIngresses {
			perObject := float64(hi.rssSynced-lo.rssSynced) / float64(hi.layout.objects()-lo.layout.objects())
			row(fmt.Sprintf("≤ 1.5 KiB resident per single-host Ingress, informer cache included (%d → %d objects)",
				lo.layout.objects(), hi.layout.objects()),
				fmt.Sprintf("%.0f bytes", perObject), perObject <= 1536)
		}
	}
}

func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return runtime.GOARCH
}

// cpuCount returns the machine's CPUs (runtime.NumCPU sees only this
// process's affinity, and the tool is pinned).
func cpuCount() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	n := strings.Count(string(b), "\nprocessor\t") + strings.Count(string(b[:min(len(b), 10)]), "processor")
	return max(n, 1)
}

func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}

// firstLine returns the line of a command's output that names its version.
func firstLine(cmd string, args ...string) string {
	out, _ := exec.Command(cmd, args...).CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "Version") {
			return cmd + " " + strings.TrimSpace(strings.TrimPrefix(line, "Version"))
		}
	}
	return cmd
}

func knotVersion(knotd string) string {
	if knotd == "" {
		return "no Knot"
	}
	out, _ := exec.Command(knotd, "-V").CombinedOutput()
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

// Markers around the generated part of the results document.
const (
	resultsBegin = "<!-- bench:results:begin -->"
	resultsEnd   = "<!-- bench:results:end -->"
)

// replaceResults puts text between the markers of the file at path.
func replaceResults(path, text string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i, j := bytes.Index(old, []byte(resultsBegin)), bytes.Index(old, []byte(resultsEnd))
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %s ... %s section", path, resultsBegin, resultsEnd)
	}
	var b bytes.Buffer
	b.Write(old[:i+len(resultsBegin)])
	b.WriteString("\n")
	b.WriteString(text)
	b.Write(old[j:])
	return os.WriteFile(path, b.Bytes(), 0o644)
}
