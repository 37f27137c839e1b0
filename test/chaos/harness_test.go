//go:build chaos

package chaos

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// plugin is a running coredns binary.
type plugin struct {
	harness.Server
	t           *testing.T
	port        int
	readyPort   int
	metricsPort int
}

// corefile is the server block of the suite: the zone example.com from the
// cluster, with ready and prometheus; extra goes into the k8s_gateway block.
func corefile(extra string) string {
	return `example.com:{$PORT} {
    bind 127.0.0.1
    errors
    ready 127.0.0.1:{$READY_PORT}
    prometheus 127.0.0.1:{$METRICS_PORT}
    k8s_gateway example.com {
        kubeconfig {$KUBECONFIG}
        resources Service DNSEndpoint
        ttl 30
` + extra + `
    }
}
`
}

// newPlugin writes the Corefile and returns the plugin, not started.
func newPlugin(t *testing.T, text, kubecfg string) *plugin {
	t.Helper()
	p := &plugin{t: t, port: freePort(t), readyPort: freePort(t), metricsPort: freePort(t)}
	p.Binary, p.Corefile = corednsBin, filepath.Join(t.TempDir(), "Corefile")
	p.ReadyURL = fmt.Sprintf("http://127.0.0.1:%d/ready", p.readyPort)
	p.writeCorefile(text)
	p.Env = append(os.Environ(), "KUBECONFIG="+kubecfg, "PORT="+strconv.Itoa(p.port),
		"READY_PORT="+strconv.Itoa(p.readyPort), "METRICS_PORT="+strconv.Itoa(p.metricsPort))
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("coredns output:\n%s", p.output())
		}
	})
	return p
}

func (p *plugin) writeCorefile(text string) {
	if err := os.WriteFile(p.Corefile, []byte(text), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func (p *plugin) addr() string { return fmt.Sprintf("127.0.0.1:%d", p.port) }

// start runs the binary; it does not wait for readiness.
func (p *plugin) start() {
	p.t.Helper()
	if err := p.Start(); err != nil {
		p.t.Fatal(err)
	}
}

func (p *plugin) waitReady(timeout time.Duration) {
	p.t.Helper()
	if err := p.WaitReady(20*time.Millisecond, timeout); err != nil {
		p.t.Fatal(err)
	}
}

// alive fails the test if the process exited (a crash).
func (p *plugin) alive() {
	p.t.Helper()
	if !p.Running() {
		p.t.Fatalf("coredns is not running:\n%s", p.output())
	}
	if out := p.output(); strings.Contains(out, "panic:") || strings.Contains(out, "goroutine ") {
		p.t.Fatalf("coredns panicked:\n%s", out)
	}
}

func (p *plugin) signal(sig syscall.Signal) { p.Signal(sig) } // nothing to signal while stopped

func (p *plugin) stop() { p.Stop() }

func (p *plugin) output() string { return p.Output() }

// rss is the resident memory of the process in KiB.
func (p *plugin) rss() int {
	b, _ := harness.ProcMemory(p.Pid(), "VmRSS")
	return int(b >> 10)
}

// metric sums the samples of a metric whose labels contain every filter;
// -1 when the plugin does not answer.
func (p *plugin) metric(name string, filters ...string) float64 {
	v, err := harness.Metric(fmt.Sprintf("http://127.0.0.1:%d/metrics", p.metricsPort), name, filters...)
	if err != nil {
		return -1
	}
	return v
}

func freePort(t *testing.T) int { return harness.FreePort(t) }

// ---- objects ----------------------------------------------------------------

// namespace creates a namespace for one scenario.
func namespace(t *testing.T) string {
	t.Helper()
	ns := "chaos-" + strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(t.Name()[strings.LastIndex(t.Name(), "/")+1:], "-"))
	ns = strings.Trim(ns, "-")
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	return ns
}

// lbService creates a LoadBalancer Service with one address in its status.
func lbService(t *testing.T, ns, name, ip string, annotations map[string]string) {
	t.Helper()
	ctx := context.Background()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ip != "" {
		if err := setAddress(ns, name, ip); err != nil {
			t.Fatal(err)
		}
	}
}

// setAddress sets a Service's load balancer address through the status subresource.
func setAddress(ns, name, ip string) error {
	patch := fmt.Sprintf(`{"status":{"loadBalancer":{"ingress":[{"ip":%q}]}}}`, ip)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := client.CoreV1().Services(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	return err
}

// changeAddress sets the address, retrying until the API server takes it,
// and tells the load when it was acknowledged.
func changeAddress(t *testing.T, l *load, ns, name, ip string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	fqdn := name + "." + ns + ".example.com"
	l.allow(fqdn, ip)
	for {
		err := setAddress(ns, name, ip)
		if err == nil {
			l.track(fqdn, ip, time.Now())
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("setting %s/%s to %s: %v", ns, name, ip, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ---- the control plane --------------------------------------------------------

func pidOf(t *testing.T, component string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(clusterDir, component+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// kill kills a component of the control plane with SIGKILL and waits until it is gone.
func kill(t *testing.T, component string) {
	t.Helper()
	pid := pidOf(t, component)
	t.Cleanup(func() { clusterScript("up") }) // whatever happens, the next scenario has a control plane
	syscall.Kill(pid, syscall.SIGKILL)
	for i := 0; i < 200 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
}

// up starts what is not running and waits for the API server.
func up(t *testing.T) {
	t.Helper()
	if err := clusterScript("up"); err != nil {
		t.Fatal(err)
	}
	waitAPI(t)
}

// upAsync starts what is not running in the background; the returned
// function waits for it and returns when the API server passed /readyz.
// Writes retried meanwhile are acknowledged at the first moment the API
// server answers again.
func upAsync(t *testing.T) (wait func() time.Time) {
	t.Helper()
	done := make(chan error, 1)
	var readyAt time.Time
	go func() {
		err := clusterScript("up")
		readyAt = time.Now()
		done <- err
	}()
	return func() time.Time {
		t.Helper()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		waitAPI(t)
		return readyAt
	}
}

// waitAPI waits until the API server serves requests.
func waitAPI(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		cancel()
		if err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("API server not back within 90s")
}

// compactEtcd compacts etcd's history up to its current revision, through
// etcd's JSON gateway: every watch must resume from a newer revision.
func compactEtcd(t *testing.T) {
	t.Helper()
	base := "http://127.0.0.1:" + etcdPort
	resp, err := http.Post(base+"/v3/kv/range", "application/json", strings.NewReader(`{"key":"AA=="}`))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`"revision":"(\d+)"`).FindStringSubmatch(buf.String())
	if m == nil {
		t.Fatalf("no revision in %s", buf.String())
	}
	resp, err = http.Post(base+"/v3/kv/compaction", "application/json", strings.NewReader(fmt.Sprintf(`{"revision":%q,"physical":true}`, m[1])))
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("compaction: %s %s", resp.Status, buf.String())
	}
	t.Logf("etcd compacted at revision %s", m[1])
}
