// Command bench measures k8s_gateway against stock CoreDNS (its file and
// whoami plugins) and Knot DNS on this machine: throughput, server CPU per
// query and latency with dnsperf, resident memory, sync time and freshness,
// at several numbers of published names. The objects live in a real
// kube-apiserver (hack/cluster.sh); the other servers serve the same records
// from a zone file. See docs/operations/benchmarks.md.
//
// It is a measuring tool, not a test: it asserts nothing about speed, and
// fails only when something does not work.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/miekg/dns"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

type options struct {
	kubeconfig, coredns, lean, knotd, dnsperf string
	sizes                                     []int
	rounds                                    int
	load                                      load
	freshSamples, churnRate                   int
	serverCPU, clientCPU                      string
	namespace, zone                           string
	basePort, workers                         int
	out, work, clusterDir                     string
	pinControlPlane, pause, singleIngresses   bool
	steering                                  string // MMDB of the steering run; "" for the size runs
}

func main() {
	var o options
	var sizes string
	flag.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster to publish from")
	flag.StringVar(&o.coredns, "coredns", "./coredns", "CoreDNS with k8s_gateway (cmd/coredns)")
	flag.StringVar(&o.lean, "lean", "", "stock CoreDNS with file and whoami (test/bench/coredns-lean)")
	flag.StringVar(&o.knotd, "knotd", "/usr/sbin/knotd", "knotd; empty to leave Knot out")
	flag.StringVar(&o.dnsperf, "dnsperf", "dnsperf", "dnsperf")
	flag.StringVar(&sizes, "sizes", "1000,10000,100000", "numbers of published names, in increasing order")
	flag.IntVar(&o.rounds, "rounds", 5, "interleaved rounds per size; the report gives medians")
	flag.DurationVar(&o.load.duration, "duration", 5*time.Second, "length of a throughput run")
	flag.IntVar(&o.load.clients, "clients", 8, "dnsperf clients (-c) of a throughput run")
	flag.IntVar(&o.load.inflight, "inflight", 200, "dnsperf outstanding queries (-q)")
	flag.IntVar(&o.load.rate, "rate", 10000, "queries per second of a latency run")
	flag.DurationVar(&o.load.latencyOf, "latency-duration", 3*time.Second, "length of a latency run")
	flag.IntVar(&o.freshSamples, "fresh", 50, "status changes timed per size")
	flag.IntVar(&o.churnRate, "churn", 100, "status updates per second during the churn run")
	flag.StringVar(&o.serverCPU, "server-cpu", "0", "CPU list the servers are pinned to")
	flag.StringVar(&o.clientCPU, "client-cpu", "1", "CPU list dnsperf, this tool and the control plane are pinned to")
	flag.BoolVar(&o.pinControlPlane, "pin-control-plane", true, "pin etcd and kube-apiserver to the client CPU")
	flag.StringVar(&o.clusterDir, "cluster-dir", "", "hack/cluster.sh state directory, for the control plane's PIDs (default: find them by name)")
	flag.BoolVar(&o.pause, "pause-control-plane", true, "stop the control plane (SIGSTOP) during each measuring run, except under churn")
	flag.BoolVar(&o.singleIngresses, "single-ingresses", false, "publish every name from a single-host Ingress of its own (the informer cache's cost per object)")
	flag.StringVar(&o.namespace, "namespace", "k8sgw-bench", "namespace of the generated objects")
	flag.StringVar(&o.zone, "zone", "bench.example.", "zone served")
	flag.IntVar(&o.basePort, "port", 15300, "first of four UDP/TCP ports on 127.0.0.1")
	flag.IntVar(&o.workers, "workers", 32, "parallel API writers of the object generator")
	flag.StringVar(&o.out, "out", "", "markdown file whose results section is replaced (docs/operations/benchmarks.md)")
	flag.StringVar(&o.work, "work", "", "scratch directory (default: a new temporary one)")
	flag.StringVar(&o.steering, "steering", "", "MMDB file: measure plain, weighted and geo names side by side instead (see steering.go)")
	flag.Parse()
	log.SetFlags(log.Ltime)
	log.SetPrefix("[bench] ")
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 10 {
			log.Fatalf("bad size %q: sizes are integers ≥ 10", s)
		}
		o.sizes = append(o.sizes, n)
	}
	o.zone = dns.Fqdn(strings.ToLower(o.zone))
	if err := run(context.Background(), o); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, o options) error {
	if o.kubeconfig == "" || o.lean == "" {
		return fmt.Errorf("-kubeconfig and -lean are required")
	}
	if o.knotd != "" {
		if _, err := os.Stat(o.knotd); err != nil {
			log.Printf("no Knot DNS at %s: leaving it out", o.knotd)
			o.knotd = ""
		}
	}
	if o.work == "" {
		dir, err := os.MkdirTemp("", "k8sgw-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.work = dir
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 1e6, 1e6 // no client-side rate limit
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	cp := findControlPlane(o.clusterDir)
	log.Printf("control plane: %d processes", len(cp.pids))
	if o.pinControlPlane {
		cp.pin(o.clientCPU)
	}
	if o.pause {
		// Never leave the control plane stopped, even on Ctrl-C.
		defer cp.resume()
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-sigs
			cp.resume()
			os.Exit(1)
		}()
	} else {
		cp = nil
	}
	pop := &populator{client: client, ns: o.namespace, zone: strings.TrimSuffix(o.zone, "."), workers: o.workers, single: o.singleIngresses}
	srv := &servers{work: o.work, coredns: o.coredns, lean: o.lean, knotd: o.knotd, kubeconfig: o.kubeconfig,
		cpu: o.serverCPU, zone: o.zone, basePort: o.basePort}
	o.load.dnsperf, o.load.cpu = o.dnsperf, o.clientCPU

	if o.steering != "" {
		steerPop := *pop
		steerPop.ns = o.namespace + "-steering"
		return runSteering(ctx, o, &steerPop, srv, cp)
	}
	rep := &report{opts: o, started: time.Now()}
	probed := false
	for _, n := range o.sizes {
		res, err := measureSize(ctx, o, n, pop, srv, cp, &probed)
		if err != nil {
			return fmt.Errorf("%d names: %w", n, err)
		}
		rep.sizes = append(rep.sizes, res)
	}
	text := rep.markdown()
	fmt.Print(text)
	if o.out != "" {
		return replaceResults(o.out, text)
	}
	return nil
}

// measureSize publishes n names and measures every server at that size.
func measureSize(ctx context.Context, o options, n int, pop *populator, srv *servers, cp *controlPlane, probed *bool) (*sizeResult, error) {
	res := &sizeResult{n: n, layout: layoutFor(n, o.singleIngresses)}
	var err error
	log.Printf("%d names: creating the objects", n)
	res.populate, err = timed(func() error {
		res.created, err = pop.ensure(ctx, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	recs := records(n, o.zone, o.namespace, o.singleIngresses)
	zoneFile := filepath.Join(o.work, "zone")
	queries := filepath.Join(o.work, "queries")
	if err := writeZone(zoneFile, o.zone, recs); err != nil {
		return nil, err
	}
	if err := writeQueries(queries, o.zone, recs, max(n, 20000)); err != nil {
		return nil, err
	}
	ld := o.load
	ld.queries = queries

	log.Printf("%d names: %d objects written in %s; starting k8s_gateway", n, res.created, res.populate.Round(time.Millisecond))
	gw, err := srv.gateway(o.namespace)
	if err != nil {
		return nil, err
	}
	defer gw.stop()
	last := recs[len(recs)-1].name
	answered, err := gw.waitAnswer(last, dns.TypeA, 2*time.Minute)
	if err != nil {
		return nil, err
	}
	res.sync = answered.Sub(gw.started)
	time.Sleep(time.Second)
	// After the pause: the plugin logs the line just after the names can
	// be answered, and a loaded machine can run the query in between.
	res.published = publishedLine(gw.out.String())
	if res.rssSynced, err = gw.rss(); err != nil {
		return nil, err
	}
	if res.anonSynced, err = gw.anonRSS(); err != nil {
		return nil, err
	}
	if res.rssPeak, err = gw.peakRSS(); err != nil {
		return nil, err
	}
	if res.wrong, err = verify(gw, recs); err != nil {
		return nil, err
	}
	if res.wrong > 0 {
		return nil, fmt.Errorf("k8s_gateway answered %d of %d names wrongly", res.wrong, len(recs))
	}
	log.Printf("%d names: synced in %s (%s), %d MiB resident (%d MiB anonymous, peak %d MiB), %d wrong answers", n,
		res.sync.Round(time.Millisecond), res.published, res.rssSynced>>20, res.anonSynced>>20, res.rssPeak>>20, res.wrong)

	all := []*server{gw}
	type starter struct {
		start func() (*server, error)
		ready uint16 // the query type that shows the server is up
	}
	starts := []starter{
		{srv.whoami, dns.TypeNone}, // whoami's answer is in the additional section
		{func() (*server, error) { return srv.file(zoneFile) }, dns.TypeSOA},
	}
	if o.knotd != "" {
		starts = append(starts, starter{func() (*server, error) { return srv.knot(zoneFile) }, dns.TypeSOA})
	}
	for _, st := range starts {
		s, err := st.start()
		if err != nil {
			return nil, err
		}
		defer s.stop()
		if _, err := s.waitAnswer(o.zone, st.ready, time.Minute); err != nil {
			return nil, err
		}
		all = append(all, s)
	}

	res.servers = make([]serverResult, len(all))
	for r := range o.rounds {
		for i, s := range all {
			var tp throughput
			var lat latency
			if err := cp.while(func() (err error) { tp, err = ld.saturate(s); return err }); err != nil {
				return nil, err
			}
			if err := cp.while(func() (err error) { lat, err = ld.measureLatency(s); return err }); err != nil {
				return nil, err
			}
			res.servers[i].name = s.name
			res.servers[i].tp = append(res.servers[i].tp, tp)
			res.servers[i].lat = append(res.servers[i].lat, lat)
			log.Printf("%d names, round %d: %-15s %8.0f QPS %6.1f µs CPU/query  p50 %s p99 %s", n, r+1, s.name,
				tp.qps, micros(tp.cpuPerQ), lat.p50.Round(time.Microsecond), lat.p99.Round(time.Microsecond))
		}
	}
	for i, s := range all {
		if res.servers[i].rss, err = s.rss(); err != nil {
			return nil, err
		}
		if res.servers[i].anon, err = s.anonRSS(); err != nil {
			return nil, err
		}
	}

	f := &prober{p: pop, server: gw}
	if !*probed {
		if err := f.setup(ctx); err != nil {
			return nil, err
		}
		*probed = true
	}
	if res.fresh, err = f.sample(ctx, o.freshSamples); err != nil {
		return nil, err
	}
	log.Printf("%d names: freshness median %s max %s (API watch delivery median %s max %s)", n,
		res.fresh.median, res.fresh.max, res.fresh.watchMedian, res.fresh.watchMax)
	defer func() {
		// What the plugin logged besides its start: reconnections, relists, warnings.
		var logged []string
		for _, line := range strings.Split(gw.out.String(), "\n") {
			plugin := strings.Contains(line, "] plugin/") && !strings.Contains(line, "published ")
			klog := len(line) > 5 && strings.ContainsRune("IWE", rune(line[0])) && line[1] >= '0' && line[1] <= '9'
			if plugin || klog {
				logged = append(logged, line)
			}
		}
		if len(logged) > 0 {
			log.Printf("%d names: k8s_gateway logged:\n%s", n, strings.Join(logged, "\n"))
		}
	}()
	if err := measureChurn(ctx, o, ld, f, gw, res); err != nil {
		return nil, err
	}
	log.Printf("%d names: under churn (%.0f updates/s) %0.f QPS, p99 %s, freshness median %s max %s (API watch delivery median %s max %s)", n,
		res.churnRate, res.churn.qps, res.churnLatency.p99, res.churnFresh.median, res.churnFresh.max,
		res.churnFresh.watchMedian, res.churnFresh.watchMax)
	return res, nil
}

// measureChurn writes o.churnRate status updates per second while it runs
// dnsperf against our server twice: saturating, for QPS, and at the fixed
// latency rate while it samples freshness. Freshness is not sampled during
// the saturating run: there every answer waits behind dnsperf's queue of
// outstanding queries, which measures the queue, not the plugin.
func measureChurn(ctx context.Context, o options, ld load, f *prober, gw *server, res *sizeResult) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type churned struct {
		n   int64
		err error
	}
	done := make(chan churned, 1)
	start := time.Now()
	go func() {
		n, err := f.churn(cctx, o.churnRate)
		done <- churned{n, err}
	}()
	tp, err := ld.saturate(gw)
	if err != nil {
		return err
	}
	type sampled struct {
		fr  freshness
		err error
	}
	fresh := make(chan sampled, 1)
	ld.latencyOf = max(ld.latencyOf, time.Duration(o.freshSamples)*30*time.Millisecond)
	go func() {
		fr, err := f.sample(cctx, o.freshSamples)
		fresh <- sampled{fr, err}
	}()
	lat, err := ld.measureLatency(gw)
	fr := <-fresh
	cancel()
	ch := <-done
	elapsed := time.Since(start)
	switch {
	case err != nil:
		return err
	case fr.err != nil:
		return fr.err
	case ch.err != nil:
		return ch.err
	}
	res.churn, res.churnLatency, res.churnFresh = tp, lat, fr.fr
	res.churnRate = float64(ch.n) / elapsed.Seconds()
	return nil
}

// catchUp is how long the control plane runs between two measuring runs.
// Without it, back-to-back pauses leave the API server no time to answer
// client-go's HTTP/2 health-check pings: the plugin's connection is
// declared lost, and its watches list everything again.
const catchUp = time.Second

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
