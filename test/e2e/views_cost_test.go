//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// TestViewsCost measures what views of one cluster cost: resident memory,
// Go heap, watches on the API server, time to ready and query rate, with 1,
// 2 and 4 k8s_gateway blocks (views) over the same objects. It is a
// measurement, not a check: it runs only with K8SGW_VIEWS_COST=1 and logs a
// table for docs/operations/benchmarks.md. The objects are K8SGW_VIEWS_COST_SERVICES
// LoadBalancer Services (an A and an SRV name each; none by default), then
// single-host Ingresses up to K8SGW_VIEWS_COST_NAMES objects (10,000 by
// default); K8SGW_VIEWS_COST_VIEWS lists the numbers of views (1,2,4), and
// K8SGW_VIEWS_COST_RESOURCES the kinds read (all by default): the Services
// alone of a namespace that holds more objects.
func TestViewsCost(t *testing.T) {
	if os.Getenv("K8SGW_VIEWS_COST") == "" {
		t.Skip("a measurement: set K8SGW_VIEWS_COST=1")
	}
	n := costEnv("K8SGW_VIEWS_COST_NAMES", 10000)
	services := min(costEnv("K8SGW_VIEWS_COST_SERVICES", 0), n)
	views := []int{1, 2, 4}
	if v := os.Getenv("K8SGW_VIEWS_COST_VIEWS"); v != "" {
		views = nil
		for _, f := range strings.Split(v, ",") {
			if k, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && k > 0 {
				views = append(views, k)
			}
		}
	}
	ns := "k8sgw-views-cost"
	costServices(t, ns, services)
	costIngresses(t, ns, services, n)
	if os.Getenv("K8SGW_VIEWS_COST_KEEP") == "" {
		t.Cleanup(func() { kubectlErr("", "delete", "namespace", ns, "--wait=false") })
	}
	lines := []string{"| views | ready after | RSS | Go heap in use | watches opened | qps, first view | qps, default block |", "|---|---|---|---|---|---|---|"}
	for _, v := range views {
		r := costRun(t, ns, services, n, v)
		lines = append(lines, fmt.Sprintf("| %d | %s | %.1f MiB | %.1f MiB | %s | %s | %s |", v, r.ready.Round(10*time.Millisecond),
			float64(r.rss)/(1<<20), float64(r.heap)/(1<<20), r.watches, r.qpsFirst, r.qpsDefault))
	}
	t.Logf("%d objects (%d Services):\n%s", n, services, strings.Join(lines, "\n"))
}

// costEnv returns the positive integer of the variable name, or def.
func costEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// costWrite runs write(i) for every i in [from, to) on 16 workers and fails
// on the first error other than AlreadyExists.
func costWrite(t *testing.T, from, to int, write func(client kubernetes.Interface, i int) error) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 2000, 2000
	client := kubernetes.NewForConfigOrDie(cfg)
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if err := write(client, i); err != nil && !apierrors.IsAlreadyExists(err) {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		})
	}
	for i := from; i < to; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
}

// costServices creates n LoadBalancer Services in ns (those missing), each
// with a port named http (an SRV name) and a private and a public address
// in its status.
func costServices(t *testing.T, ns string, n int) {
	t.Helper()
	kubectlErr("", "create", "namespace", ns)
	start := time.Now()
	costWrite(t, 0, n, func(client kubernetes.Interface, i int) error {
		ctx, name := context.Background(), fmt.Sprintf("s-%05d", i)
		if got, err := client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{}); err == nil && len(got.Status.LoadBalancer.Ingress) == 2 {
			return nil
		}
		no := false
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: &no, // n would exhaust the NodePort range
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		}}
		if _, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		patch := fmt.Sprintf(`{"status":{"loadBalancer":{"ingress":[{"ip":%q},{"ip":%q}]}}}`, costAddr(i, true), costAddr(i, false))
		_, err := client.CoreV1().Services(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		return err
	})
	t.Logf("%d Services in place after %s", n, time.Since(start).Round(time.Millisecond))
}

// costIngresses creates the Ingresses from to n in ns (those missing), each
// pointing at a private and a public address through the target annotation.
func costIngresses(t *testing.T, ns string, from, n int) {
	t.Helper()
	kubectlErr("", "create", "namespace", ns)
	start := time.Now()
	existing := costExistingIngresses(t, ns)
	costWrite(t, from, n, func(client kubernetes.Interface, i int) error {
		if existing[fmt.Sprintf("i-%05d", i)] {
			return nil // kept from an earlier run (K8SGW_VIEWS_COST_KEEP)
		}
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("i-%05d", i), Namespace: ns, Annotations: map[string]string{
				"external-dns.kubernetes.io/target": costAddr(i, true) + "," + costAddr(i, false),
			}},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: fmt.Sprintf("i-%05d.cost.example.com", i)}}},
		}
		_, err := client.NetworkingV1().Ingresses(ns).Create(context.Background(), ing, metav1.CreateOptions{})
		return err
	})
	t.Logf("%d Ingresses in place after %s", n-from, time.Since(start).Round(time.Millisecond))
}

// costExistingIngresses returns the names of the Ingresses in ns, listed
// in pages: a kept namespace is checked in seconds, not one call per object.
func costExistingIngresses(t *testing.T, ns string) map[string]bool {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	names := map[string]bool{}
	opts := metav1.ListOptions{Limit: 5000}
	for {
		list, err := client.NetworkingV1().Ingresses(ns).List(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, ing := range list.Items {
			names[ing.Name] = true
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			return names
		}
	}
}

// costName is the name of object i and its zone-relative DNS name.
func costName(ns string, services, i int) string {
	if i < services {
		return fmt.Sprintf("s-%05d.%s.example.com.", i, ns)
	}
	return fmt.Sprintf("i-%05d.cost.example.com.", i)
}

type costResult struct {
	ready                         time.Duration
	rss, heap                     int64
	watches, qpsFirst, qpsDefault string
}

// costCorefile writes a Corefile of views blocks of example.com: views-1
// view blocks for the clients 127.0.0.2, 127.0.0.3... and the default block.
func costCorefile(t *testing.T, views, metricsPort, pprofPort int) string {
	t.Helper()
	var b strings.Builder
	for i := range views {
		b.WriteString("example.com:{$K8S_GATEWAY_PORT} {\n")
		if i == 0 && pprofPort != 0 {
			fmt.Fprintf(&b, "    pprof 127.0.0.1:%d\n", pprofPort)
		}
		if i < views-1 {
			fmt.Fprintf(&b, "    view v%d {\n        expr incidr(client_ip(), '127.0.0.%d/32')\n    }\n", i, i+2)
		}
		fmt.Fprintf(&b, "    bind 127.0.0.1\n    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}\n    prometheus 127.0.0.1:%d\n", metricsPort)
		b.WriteString("    k8s_gateway example.com {\n        kubeconfig {$KUBECONFIG}\n        ttl 30\n")
		if r := os.Getenv("K8SGW_VIEWS_COST_RESOURCES"); r != "" {
			fmt.Fprintf(&b, "        resources %s\n", r)
		}
		if i%2 == 0 {
			b.WriteString("        include 10.0.0.0/8\n    }\n}\n")
		} else {
			b.WriteString("        exclude 10.0.0.0/8\n    }\n}\n")
		}
	}
	path := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(repoRoot, path)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func costRun(t *testing.T, ns string, services, n, views int) costResult {
	t.Helper()
	metricsPort, pprofPort := freePort(t), 0
	profiles := os.Getenv("K8SGW_VIEWS_COST_PPROF") // a directory for heap profiles
	if profiles != "" {
		pprofPort = freePort(t)
	}
	before := apiWatches(t)
	start := time.Now()
	s := startServer(t, costCorefile(t, views, metricsPort, pprofPort), kubeconfig)
	var r costResult
	r.ready = time.Since(start)
	last := costName(ns, services, n-1)
	s.eventuallyFrom(t, "127.0.0.1", 30*time.Second, last, dns.TypeA, positive(fmt.Sprintf("%s 30 IN A %s", last, costAddr(n-1, views == 1))))
	if views > 1 {
		s.eventuallyFrom(t, "127.0.0.2", 30*time.Second, last, dns.TypeA, positive(fmt.Sprintf("%s 30 IN A %s", last, costAddr(n-1, true))))
	}
	time.Sleep(3 * time.Second) // let the collector settle
	r.watches = watchDelta(before, apiWatches(t))
	pid := s.Pid()
	r.rss = procMemory(t, pid, "VmRSS")
	r.heap = int64(promValue(t, metricsPort, "go_memstats_heap_inuse_bytes"))
	if profiles != "" {
		out := filepath.Join(profiles, fmt.Sprintf("heap-%d-views.pb.gz", views))
		if b, err := exec.Command("curl", "-sf", "-o", out, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", pprofPort)).CombinedOutput(); err != nil {
			t.Fatalf("heap profile: %v\n%s", err, b)
		}
	}
	r.qpsDefault = dnsperfQPS(t, s.port, "127.0.0.1", ns, services, n)
	r.qpsFirst = r.qpsDefault
	if views > 1 {
		r.qpsFirst = dnsperfQPS(t, s.port, "127.0.0.2", ns, services, n)
	}
	s.stop()
	return r
}

// costAddr is the address object i answers with: its private one in a view
// that includes 10/8, else its public one.
func costAddr(i int, private bool) string {
	if private {
		return fmt.Sprintf("10.%d.%d.%d", i>>16, i/250%256, i%250+1)
	}
	return fmt.Sprintf("198.51.%d.%d", i/250%256, i%250+1)
}

func procMemory(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := harness.ProcMemory(pid, field)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func promValue(t *testing.T, port int, name string) float64 {
	t.Helper()
	out, err := exec.Command("curl", "-s", fmt.Sprintf("http://127.0.0.1:%d/metrics", port)).Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no %s in the metrics", name)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// apiWatches returns the API server's open watches by resource.
func apiWatches(t *testing.T) map[string]int {
	t.Helper()
	out := kubectl(t, "", "get", "--raw", "/metrics")
	re := regexp.MustCompile(`(?m)^apiserver_longrunning_requests\{([^}]*)\} (\d+)$`)
	res := regexp.MustCompile(`resource="([^"]*)"`)
	got := map[string]int{}
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		if !strings.Contains(m[1], `verb="WATCH"`) {
			continue
		}
		r := res.FindStringSubmatch(m[1])
		v, _ := strconv.Atoi(m[2])
		if r != nil {
			got[r[1]] += v
		}
	}
	return got
}

// watchDelta tells how many more watches each resource has, e.g. "ingresses 2, services 2".
func watchDelta(before, after map[string]int) string {
	total := 0
	var per []string
	for _, r := range []string{"ingresses", "services", "httproutes", "gateways", "namespaces"} {
		d := after[r] - before[r]
		per = append(per, fmt.Sprintf("%s %d", r, d))
	}
	for r, v := range after {
		total += v - before[r]
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(per, ", "))
}

// dnsperfQPS runs dnsperf for 3 s from src over every name and returns the queries per second.
func dnsperfQPS(t *testing.T, port int, src, ns string, services, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s A\n", costName(ns, services, i))
	}
	file := filepath.Join(t.TempDir(), "queries")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("dnsperf", "-s", "127.0.0.1", "-p", strconv.Itoa(port), "-a", src, "-d", file,
		"-c", "4", "-q", "100", "-l", "3").CombinedOutput()
	if err != nil {
		t.Fatalf("dnsperf: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Queries per second:\s+(\S+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("dnsperf printed no rate:\n%s", out)
	}
	return string(m[1])
}
