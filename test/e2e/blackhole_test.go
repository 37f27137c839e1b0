//go:build e2e

package e2e

import (
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// holeProxy forwards TCP connections to target until hole is called; from
// then on it neither answers nor closes anything: bytes are read and
// dropped, new connections are accepted and held. restore closes what it
// holds and forwards again.
type holeProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	holed  bool
	conns  map[net.Conn]bool
}

func startHoleProxy(t *testing.T, target string) *holeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &holeProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() {
		ln.Close()
		p.closeAll()
	})
	go p.serve()
	return p
}

func (p *holeProxy) addr() string { return p.ln.Addr().String() }

func (p *holeProxy) isHoled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.holed
}

func (p *holeProxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns[c] = true
	p.mu.Unlock()
}

func (p *holeProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *holeProxy) hole() {
	p.mu.Lock()
	p.holed = true
	p.mu.Unlock()
}

func (p *holeProxy) restore() {
	p.mu.Lock()
	p.holed = false
	p.mu.Unlock()
	p.closeAll()
}

func (p *holeProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.track(c)
		if p.isHoled() {
			go io.Copy(io.Discard, c)
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.track(up)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

// pipe copies from src to dst while not holed; holed, it drops what it
// reads, and an end of src then closes nothing.
func (p *holeProxy) pipe(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.isHoled() {
			if _, werr := dst.Write(buf[:n]); werr != nil && !p.isHoled() {
				src.Close()
				return
			}
		}
		if err != nil {
			if !p.isHoled() {
				dst.Close()
			}
			return
		}
	}
}

// TestFailoverBlackHole: cluster one's API server is reached through a
// proxy that stops forwarding without closing anything, as a black-holed
// network does. A quiet cluster that answers stays primary; once it is
// holed, cluster two answers about failover (5 s) after the last contact,
// not when client-go's connection health check gives up (45 s and more);
// and cluster one is primary again once it answers.
func TestFailoverBlackHole(t *testing.T) {
	kc2 := secondCluster(t)
	server := kubectl(t, "", "config", "view", "--raw", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	p := startHoleProxy(t, u.Host)
	raw := kubectl(t, "", "config", "view", "--raw", "--minify")
	proxied := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(proxied, []byte(strings.ReplaceAll(raw, server, "https://"+p.addr())), 0o600); err != nil {
		t.Fatal(err)
	}
	metrics := freePort(t)
	s := startServer(t, "test/e2e/testdata/Corefile.failover", proxied,
		"KUBECONFIG2="+kc2, "K8S_GATEWAY_METRICS_PORT="+strconv.Itoa(metrics))
	ns := fleetNamespace(t, kubeconfig, kc2)
	app := "app." + ns + ".example.com"
	lbServiceAt(t, kubeconfig, ns, "web", app, "192.0.2.63")
	lbServiceAt(t, kc2, ns, "web", app, "192.0.2.64")
	one, two := positive(app+". 30 IN A 192.0.2.63"), positive(app+". 30 IN A 192.0.2.64")
	s.eventually(t, 10*time.Second, app+".", dns.TypeA, one)

	// Three failover times with nothing to say: still the primary.
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		r, err := s.query(app+".", dns.TypeA)
		if err != nil {
			t.Fatal(err)
		}
		if err := one.check(r); err != nil {
			t.Fatalf("a quiet API server that answers lost its priority: %v", err)
		}
	}

	p.hole()
	holed := time.Now()
	d := s.eventually(t, 20*time.Second, app+".", dns.TypeA, two)
	t.Logf("black-holed → cluster two answers after %s (failover 5s)", d.Round(10*time.Millisecond))
	if el := time.Since(holed); el < 3*time.Second {
		t.Errorf("failed over %s after the hole, long before the failover time", el)
	}
	if v := metric(t, metrics, "coredns_k8s_gateway_cluster_failed_over", `cluster="one"`); v != 1 {
		t.Errorf("cluster_failed_over{one} %v, want 1", v)
	}
	p.restore()
	d = s.eventually(t, 30*time.Second, app+".", dns.TypeA, one)
	t.Logf("forwarding again → cluster one answers after %s", d.Round(10*time.Millisecond))
}
