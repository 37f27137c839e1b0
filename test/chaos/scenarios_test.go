//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// outage is how long the control plane stays broken in a scenario: long
// enough for client-go's own backoff to grow to several seconds.
const outage = 8 * time.Second

// fixture is the state every scenario starts from: a namespace with three
// LoadBalancer Services, a running plugin that answers them, and the load.
type fixture struct {
	ns   string
	p    *plugin
	l    *load
	svcs []string
	// API requests before the scenario, to count those it caused.
	lists0, watches0 float64
}

func setUp(t *testing.T, extra, kubecfg string) *fixture {
	t.Helper()
	f := &fixture{ns: namespace(t), svcs: []string{"a", "b", "c"}}
	if kubecfg == "" {
		kubecfg = kubeconfig
	}
	for i, s := range f.svcs {
		lbService(t, f.ns, s, fmt.Sprintf("192.0.2.%d", i+1), nil)
	}
	f.p = newPlugin(t, corefile(extra), kubecfg)
	f.p.start()
	f.p.waitReady(60 * time.Second)
	f.l = newLoad(f.p.addr())
	for i, s := range f.svcs {
		f.l.expect(f.name(s), fmt.Sprintf("192.0.2.%d", i+1), time.Time{})
	}
	f.l.expect("nothing."+f.ns+".example.com", "NXDOMAIN", time.Time{})
	f.l.start()
	f.lists0, f.watches0 = f.p.metric("coredns_k8s_gateway_api_requests_total", `verb="list"`), f.p.metric("coredns_k8s_gateway_api_requests_total", `verb="watch"`)
	return f
}

func (f *fixture) name(svc string) string { return svc + "." + f.ns + ".example.com" }

// changeAll gives every Service a new address, right after the API is back.
func (f *fixture) changeAll(t *testing.T, round int) {
	t.Helper()
	for i, s := range f.svcs {
		changeAddress(t, f.l, f.ns, s, fmt.Sprintf("198.51.100.%d", round*10+i))
	}
}

func (f *fixture) finish(t *testing.T, notes string, allowServfail bool) {
	t.Helper()
	f.p.alive()
	r := f.l.summarize(t, notes, allowServfail)
	lists := f.p.metric("coredns_k8s_gateway_api_requests_total", `verb="list"`) - f.lists0
	watches := f.p.metric("coredns_k8s_gateway_api_requests_total", `verb="watch"`) - f.watches0
	reportMu.Lock()
	report[len(report)-1].lists, report[len(report)-1].watches = lists, watches
	reportMu.Unlock()
	t.Logf("list calls %.0f, watch calls %.0f (Service and DNSEndpoint informers)", lists, watches)
	_ = r
}

func TestChaos(t *testing.T) {
	defer checkTargets(t)
	t.Run("apiserver-killed", func(t *testing.T) {
		f := setUp(t, "", "")
		kill(t, "kube-apiserver")
		time.Sleep(outage)
		wait := upAsync(t)
		f.changeAll(t, 1)
		wait()
		f.finish(t, "SIGKILL, 8 s down, restarted", false)
	})

	t.Run("apiserver-paused", func(t *testing.T) {
		f := setUp(t, "", "")
		pid := pidOf(t, "kube-apiserver")
		syscall.Kill(pid, syscall.SIGSTOP)
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
		time.Sleep(outage)
		syscall.Kill(pid, syscall.SIGCONT)
		f.changeAll(t, 1)
		f.finish(t, "SIGSTOP for 8 s", false)
	})

	t.Run("etcd-killed", func(t *testing.T) {
		f := setUp(t, "", "")
		kill(t, "etcd")
		time.Sleep(outage)
		wait := upAsync(t)
		f.changeAll(t, 1)
		wait()
		f.finish(t, "SIGKILL, 8 s down, restarted", false)
	})

	t.Run("watch-expired-by-compaction", func(t *testing.T) {
		f := setUp(t, "", "")
		// History the plugin never watched (writes of another kind), then
		// compacted away: its watches must resume from a compacted revision.
		for i := range 20 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: fmt.Sprintf("filler-%d", i)}}
			if _, err := client.CoreV1().ConfigMaps(f.ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		compactEtcd(t)
		kill(t, "kube-apiserver")
		wait := upAsync(t)
		f.changeAll(t, 1)
		wait()
		f.finish(t, "etcd compacted, watches resumed from a compacted revision", false)
	})

	t.Run("started-while-api-down", func(t *testing.T) {
		ns := namespace(t)
		lbService(t, ns, "a", "192.0.2.1", nil)
		p := newPlugin(t, corefile(""), kubeconfig)
		kill(t, "kube-apiserver")
		start := time.Now()
		p.start()
		// No silence: it answers (SERVFAIL, without data) from the first moment.
		first := time.Duration(0)
		c := &dns.Client{Timeout: 200 * time.Millisecond}
		for time.Since(start) < 5*time.Second {
			m := new(dns.Msg)
			m.SetQuestion("a."+ns+".example.com.", dns.TypeA)
			if in, _, err := c.Exchange(m, p.addr()); err == nil {
				if in.Rcode != dns.RcodeServerFailure {
					t.Errorf("answer %s without the API, want SERVFAIL", dns.RcodeToString[in.Rcode])
				}
				first = time.Since(start)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if first == 0 {
			t.Fatalf("no answer within 5s of starting while the API server is down:\n%s", p.output())
		}
		l := newLoad(p.addr())
		// Not yet within the targets: the first sync comes 1 to 5 s after
		// the API server (see docs/operations/chaos.md).
		l.maxDelay = 10 * time.Second
		l.expect("a."+ns+".example.com", "192.0.2.1", time.Time{})
		l.start()
		time.Sleep(outage)
		wait := upAsync(t)
		changeAddress(t, l, ns, "a", "198.51.100.1")
		back := time.Now()
		p.waitReady(30 * time.Second)
		ready := time.Now()
		readyz := wait()
		if os.Getenv("K8SGW_CHAOS_LOG") != "" {
			t.Log(p.output())
		}
		// The first sync needs the API server's watch cache, which it may
		// build after it answers writes: the target counts from the later
		// of the write and /readyz.
		l.mu.Lock()
		for _, c := range l.changes {
			if readyz.After(c.made) {
				c.made = readyz
			}
		}
		l.mu.Unlock()
		p.alive()
		l.summarize(t, fmt.Sprintf("first answer %s after start; API /readyz %s, plugin ready %s after the API's first answer; change timed from the later", ms(first), ms(readyz.Sub(back)), ms(ready.Sub(back))), true)
	})

	t.Run("started-while-api-down-with-copy", func(t *testing.T) {
		ns := namespace(t)
		lbService(t, ns, "a", "192.0.2.1", nil)
		dir := t.TempDir()
		copyFile := filepath.Join(dir, "example.com.zone")
		p := newPlugin(t, corefile("        persist "+dir), kubeconfig)
		// A first run writes the copy.
		p.start()
		p.waitReady(60 * time.Second)
		for begin := time.Now(); ; time.Sleep(20 * time.Millisecond) {
			if b, _ := os.ReadFile(copyFile); strings.Contains(string(b), "a."+ns+".example.com.\t30\tIN\tA\t192.0.2.1") {
				break
			}
			if time.Since(begin) > 10*time.Second {
				t.Fatalf("no copy of a.%s in %s after 10 s", ns, copyFile)
			}
		}
		p.stop()
		kill(t, "kube-apiserver")
		start := time.Now()
		p.start()
		// The copy from the first moment: the right answer, authoritative,
		// and ready.
		first := time.Duration(0)
		c := &dns.Client{Timeout: 200 * time.Millisecond}
		for time.Since(start) < 5*time.Second {
			m := new(dns.Msg)
			m.SetQuestion("a."+ns+".example.com.", dns.TypeA)
			if in, _, err := c.Exchange(m, p.addr()); err == nil {
				if in.Rcode != dns.RcodeSuccess || !in.Authoritative || len(in.Answer) != 1 || in.Answer[0].(*dns.A).A.String() != "192.0.2.1" {
					t.Errorf("first answer without the API:\n%s\nwant 192.0.2.1 with AA from the copy", in)
				}
				first = time.Since(start)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if first == 0 {
			t.Fatalf("no answer within 5s of starting while the API server is down:\n%s", p.output())
		}
		p.waitReady(5 * time.Second)
		ready := time.Since(start)
		l := newLoad(p.addr())
		// The first sync comes 1 to 5 s after the API server, as in
		// started-while-api-down; the copy is answered meanwhile.
		l.maxDelay = 10 * time.Second
		l.expect("a."+ns+".example.com", "192.0.2.1", time.Time{})
		l.start()
		time.Sleep(outage)
		wait := upAsync(t)
		changeAddress(t, l, ns, "a", "198.51.100.1")
		readyz := wait()
		l.mu.Lock()
		for _, c := range l.changes {
			if readyz.After(c.made) {
				c.made = readyz
			}
		}
		l.mu.Unlock()
		p.alive()
		l.summarize(t, fmt.Sprintf("plugin started with the API server killed and a copy on disk: first answer (the copy's, AA) %s and ready %s after the start; change timed from the later of the write and /readyz", ms(first), ms(ready)), false)
	})

	t.Run("rbac-revoked-and-restored", func(t *testing.T) {
		sa := serviceAccount(t)
		f := setUp(t, "", tokenKubeconfig(t, sa))
		kubectl(t, "", "delete", "clusterrolebinding", sa)
		// Open watches keep running after a revocation; a restart of the
		// API server makes every request of the plugin ask again.
		kill(t, "kube-apiserver")
		up(t)
		f.changeAll(t, 1) // not visible: forbidden
		deadline := time.Now().Add(30 * time.Second)
		for f.p.metric("coredns_k8s_gateway_kind_enabled", `kind="Service"`) != 0 {
			if time.Now().After(deadline) {
				t.Fatal("kind_enabled{kind=Service} did not go to 0 while forbidden")
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(outage)
		// Restore; the changes made while forbidden count from here.
		restored := time.Now()
		kubectl(t, clusterRoleBinding(sa), "apply", "-f", "-")
		f.l.mu.Lock()
		for _, c := range f.l.changes {
			c.made = restored
		}
		f.l.mu.Unlock()
		f.finish(t, "binding deleted, API server restarted, binding restored; kind_enabled went to 0", false)
		if v := f.p.metric("coredns_k8s_gateway_kind_enabled", `kind="Service"`); v != 1 {
			t.Errorf("kind_enabled{kind=Service} = %v after the restore, want 1", v)
		}
	})

	t.Run("crd-deleted-and-recreated", func(t *testing.T) {
		crd, err := os.ReadFile(filepath.Join(repoRoot, "test/e2e/testdata/dnsendpoint-crd.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		kubectl(t, string(crd), "apply", "-f", "-")
		waitCRD(t)
		f := setUp(t, "", "")
		ep := func(ip string) string {
			return fmt.Sprintf(`{"apiVersion":"externaldns.k8s.io/v1alpha1","kind":"DNSEndpoint","metadata":{"name":"ep","namespace":%q},"spec":{"endpoints":[{"dnsName":"ep.%s.example.com","recordType":"A","targets":[%q]}]}}`, f.ns, f.ns, ip)
		}
		epName := "ep." + f.ns + ".example.com"
		f.l.allow(epName, "NXDOMAIN")
		f.l.allow(epName, "192.0.2.99")
		kubectl(t, ep("192.0.2.99"), "apply", "-f", "-")
		f.l.track(epName, "192.0.2.99", time.Now())
		f.l.waitChanges()
		f.l.allow(epName, "NXDOMAIN")
		kubectlDelete(t, string(crd))
		f.l.track(epName, "NXDOMAIN", time.Now())
		time.Sleep(outage)
		kubectl(t, string(crd), "apply", "-f", "-")
		waitCRD(t)
		f.l.allow(epName, "192.0.2.100")
		kubectl(t, ep("192.0.2.100"), "apply", "-f", "-")
		f.l.track(epName, "192.0.2.100", time.Now())
		f.changeAll(t, 1)
		f.finish(t, "DNSEndpoint CRD deleted (its objects with it) and re-created", false)
	})

	t.Run("corefile-reloads", func(t *testing.T) {
		f := setUp(t, "", "")
		good := corefile("")
		for i, text := range []string{
			strings.Replace(good, "ttl 30", "ttl 30000", 1), // out of range
			strings.Replace(good, "k8s_gateway example.com {", "k8s_gateway example.com {\n        nonsense", 1),
			good,
			strings.Replace(good, "ttl 30", "ttl 31", 1),
		} {
			f.p.writeCorefile(text)
			f.p.signal(syscall.SIGUSR1)
			time.Sleep(time.Second)
			f.p.alive()
			changeAddress(t, f.l, f.ns, "a", fmt.Sprintf("198.51.100.%d", 50+i))
		}
		f.finish(t, "SIGUSR1 with two broken and two good Corefiles", true)
		if !strings.Contains(f.p.output(), "ttl must be") {
			t.Errorf("no error about the broken ttl in the log")
		}
	})

	t.Run("malformed-objects", func(t *testing.T) {
		f := setUp(t, "", "")
		lbService(t, f.ns, "badtarget", "192.0.2.50", map[string]string{"external-dns.kubernetes.io/target": "999.1.1.1"})
		lbService(t, f.ns, "badhost", "192.0.2.51", map[string]string{"coredns.io/hostname": "bad_host!.example.com,-x-,ok." + f.ns})
		lbService(t, f.ns, "badip", "", nil)
		setAddress(f.ns, "badip", "300.1.1.1") // refused by the API server's validation, or published as nothing
		f.l.expect("badtarget."+f.ns+".example.com", "192.0.2.50", time.Now())
		f.l.expect("ok."+f.ns+".example.com", "192.0.2.51", time.Now())
		f.changeAll(t, 1)
		f.finish(t, "invalid target, hostnames and addresses", false)
		if out := f.p.output(); !strings.Contains(out, "Service/"+f.ns+"/badtarget") {
			t.Errorf("no log line naming Service/%s/badtarget:\n%s", f.ns, out)
		}
	})

	t.Run("junk-packets", func(t *testing.T) {
		f := setUp(t, "", "")
		junk(t, f.p.addr())
		f.changeAll(t, 1)
		f.finish(t, "2,000 random UDP datagrams and 200 TCP streams", false)
	})

	t.Run("status-churn-memory", func(t *testing.T) {
		f := setUp(t, "", "")
		var rss []int
		for run := range 3 {
			for i := range 300 {
				ip := fmt.Sprintf("203.0.%d.%d", 100+run, i%250)
				f.l.allow(f.name("c"), ip) // each one is right for a moment
				if err := setAddress(f.ns, "c", ip); err != nil {
					t.Fatal(err)
				}
			}
			f.l.expect(f.name("c"), fmt.Sprintf("203.0.%d.%d", 100+run, 299%250), time.Now())
			f.l.waitChanges()
			rss = append(rss, f.p.rss())
		}
		f.changeAll(t, 1)
		f.finish(t, fmt.Sprintf("3 × 300 status updates; RSS %d, %d, %d KiB", rss[0], rss[1], rss[2]), false)
		if rss[2] > rss[0]+rss[0]/4 {
			t.Errorf("RSS grew from %d to %d KiB over repeated runs", rss[0], rss[2])
		}
	})
}

// junk sends random datagrams and TCP streams; the server must keep answering.
func junk(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	buf := make([]byte, 600)
	for i := range 2000 {
		n := 1 + rand.IntN(len(buf))
		for j := range n {
			buf[j] = byte(rand.Uint32())
		}
		if i%3 == 0 && n > 12 {
			// A DNS header with a question count, so the parser goes further.
			buf[4], buf[5] = 0, 1
		}
		conn.Write(buf[:n])
	}
	for range 200 {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		n := 1 + rand.IntN(len(buf))
		for j := range n {
			buf[j] = byte(rand.Uint32())
		}
		c.SetDeadline(time.Now().Add(100 * time.Millisecond))
		c.Write(buf[:n])
		c.Close()
	}
}

func waitCRD(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := kubectlErr("", "get", "dnsendpoints", "-A"); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("DNSEndpoint CRD not served")
}

func kubectlDelete(t *testing.T, manifest string) {
	t.Helper()
	kubectl(t, manifest, "delete", "-f", "-", "--wait=true")
}

// serviceAccount creates a ServiceAccount that may list and watch Services
// and DNSEndpoints, through a ClusterRoleBinding of its name.
func serviceAccount(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("chaos-rbac-%04d", rand.IntN(10000))
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: ServiceAccount
metadata: {name: %[1]s, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s}
rules:
- {apiGroups: [""], resources: [services], verbs: [list, watch]}
- {apiGroups: [externaldns.k8s.io], resources: [dnsendpoints], verbs: [list, watch]}
`, name)+"---\n"+clusterRoleBinding(name), "apply", "-f", "-")
	t.Cleanup(func() {
		kubectlErr("", "delete", "clusterrole,clusterrolebinding", name)
		kubectlErr("", "-n", "default", "delete", "serviceaccount", name)
	})
	return name
}

func clusterRoleBinding(name string) string {
	return fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s}
subjects: [{kind: ServiceAccount, name: %[1]s, namespace: default}]
`, name)
}

// tokenKubeconfig writes a kubeconfig that authenticates as the ServiceAccount.
func tokenKubeconfig(t *testing.T, sa string) string {
	t.Helper()
	token := strings.TrimSpace(kubectl(t, "", "-n", "default", "create", "token", sa, "--duration=1h"))
	server := kubectl(t, "", "config", "view", "--raw", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")
	ca := kubectl(t, "", "config", "view", "--raw", "--minify", "-o", "jsonpath={.clusters[0].cluster.certificate-authority-data}")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: u, user: {token: %q}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, server, ca, token)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
