//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestReplicasSecondaries: two replicas of the plugin (two coredns
// processes reading the same cluster) behind one address, as behind a
// Service: a forwarder in the test hands each UDP query and each TCP
// connection to the next replica in turn. BIND and Knot are secondaries of
// that address, notified by both replicas. While Services are created,
// readdressed and deleted in bursts, the secondaries' SOA queries and
// transfers alternate between the replicas; once the changes stop, every
// secondary must hold exactly what the replicas transfer.
//
// K8SGW_REPLICAS_SEED repeats a run's changes (printed by every run);
// K8SGW_REPLICAS_SECONDS sets how long they go on (20).
func TestReplicasSecondaries(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("K8SGW_REPLICAS_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	seconds := envInt(t, "K8SGW_REPLICAS_SECONDS", 20)
	t.Logf("K8SGW_REPLICAS_SEED=%d", seed)
	bindPort, knotPort := freePort(t), freePort(t)
	dir := t.TempDir()
	corefile := filepath.Join(dir, "Corefile")
	writeFile(t, corefile, fmt.Sprintf(`example.com:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    transfer {
        to 127.0.0.1:%d 127.0.0.1:%d
    }
    k8s_gateway example.com {
        kubeconfig {$KUBECONFIG}
        apex dns1.kube-system
        ttl 30
    }
}
`, bindPort, knotPort))
	rel, err := filepath.Rel(repoRoot, corefile)
	if err != nil {
		t.Fatal(err)
	}
	nameserverService(t, "192.0.2.53")
	ns := namespace(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 500
	client := kubernetes.NewForConfigOrDie(cfg)
	const services = 12
	ch := &churn{t: t, client: client, ns: ns, rand: rand.New(rand.NewPCG(seed, 1)), present: map[int]bool{}}
	for i := range services {
		ch.create(i)
	}

	replicas := []*server{startServer(t, rel, kubeconfig), startServer(t, rel, kubeconfig)}
	fwd := startForwarder(t, replicas[0].port, replicas[1].port)
	bind := startSecondaryReadable(t, "bind", bindPort, fwd.port)
	knot := startSecondaryReadable(t, "knot", knotPort, fwd.port)
	peers := []*daemon{bind, knot}
	converged(t, replicas, peers, 30*time.Second)

	// Bursts of one to four changes back to back, a pause of up to 0.7 s
	// between bursts: several changes within a second, and serials moving
	// while the secondaries transfer.
	end := time.Now().Add(time.Duration(seconds) * time.Second)
	changes := 0
	for time.Now().Before(end) {
		for range 1 + ch.rand.IntN(4) {
			ch.step(ch.rand.IntN(services))
			changes++
		}
		time.Sleep(time.Duration(ch.rand.IntN(700)) * time.Millisecond)
	}
	t.Logf("%d changes in %ds; forwarded %d UDP queries and %d TCP connections to each replica in turn",
		changes, seconds, fwd.udp.Load(), fwd.tcp.Load())
	converged(t, replicas, peers, 60*time.Second)
	for _, p := range peers {
		t.Logf("%s: %s", p.name, transfersOf(p))
	}
}

// churn changes the test's Services at random.
type churn struct {
	t       *testing.T
	client  kubernetes.Interface
	ns      string
	rand    *rand.Rand
	present map[int]bool
	n       int // changes made, for fresh addresses
}

// step creates Service i, deletes it, or gives it a new address.
func (c *churn) step(i int) {
	switch {
	case !c.present[i]:
		c.create(i)
	case c.rand.IntN(4) == 0:
		if err := c.client.CoreV1().Services(c.ns).Delete(context.Background(), fmt.Sprintf("svc-%d", i), metav1.DeleteOptions{}); err != nil {
			c.t.Fatal(err)
		}
		delete(c.present, i)
	default:
		c.address(i)
	}
}

// create creates the LoadBalancer Service svc-i, with an address.
func (c *churn) create(i int) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d", i), Namespace: c.ns},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}},
	}
	if _, err := c.client.CoreV1().Services(c.ns).Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
	c.present[i] = true
	c.address(i)
}

// address gives Service svc-i a new load-balancer address.
func (c *churn) address(i int) {
	c.n++
	svc, err := c.client.CoreV1().Services(c.ns).Get(context.Background(), fmt.Sprintf("svc-%d", i), metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: fmt.Sprintf("198.51.100.%d", 1+c.n%250)}}
	if _, err := c.client.CoreV1().Services(c.ns).UpdateStatus(context.Background(), svc, metav1.UpdateOptions{}); err != nil {
		c.t.Fatal(err)
	}
}

// startSecondaryReadable runs BIND or Knot with the configuration of
// test/e2e/testdata/secondaries, as a secondary of example.com at
// primaryPort, and lets the test transfer the zone from it.
func startSecondaryReadable(t *testing.T, kind string, port, primaryPort int) *daemon {
	t.Helper()
	dir := t.TempDir()
	vars := secondaryVars(dir, port, primaryPort)
	if kind == "bind" {
		conf := renderConfig(t, "test/e2e/testdata/secondaries/named.conf", vars)
		conf = strings.Replace(conf, "allow-transfer { none; };", "allow-transfer { 127.0.0.1; };", 1)
		writeFile(t, filepath.Join(dir, "named.conf"), conf)
		return startDaemon(t, kind, dir, port, sbin(t, "named"), "-g", "-4", "-n", "1", "-c", filepath.Join(dir, "named.conf"))
	}
	conf := renderConfig(t, "test/e2e/testdata/secondaries/knot.conf", vars)
	conf = strings.Replace(conf, "    action: notify\n", "    action: notify\n  - id: transfer_to_test\n    address: 127.0.0.1\n    action: transfer\n", 1)
	conf = strings.Replace(conf, "    acl: notify_from_k8s_gateway\n", "    acl: [notify_from_k8s_gateway, transfer_to_test]\n", 1)
	writeFile(t, filepath.Join(dir, "knot.conf"), conf)
	return startDaemon(t, kind, dir, port, sbin(t, "knotd"), "-c", filepath.Join(dir, "knot.conf"))
}

// zoneContent transfers example.com from the server at port (AXFR) and
// returns its SOA serial and its other records, sorted, one per line.
func zoneContent(port int) (uint32, string, error) {
	m := new(dns.Msg)
	m.SetAxfr("example.com.")
	tr := &dns.Transfer{DialTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second}
	env, err := tr.In(m, fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return 0, "", err
	}
	var serial uint32
	var lines []string
	for e := range env {
		if e.Error != nil {
			return 0, "", e.Error
		}
		for _, rr := range e.RR {
			if soa, ok := rr.(*dns.SOA); ok {
				serial = soa.Serial
				continue
			}
			lines = append(lines, strings.Join(strings.Fields(rr.String()), " "))
		}
	}
	slices.Sort(lines)
	return serial, strings.Join(slices.Compact(lines), "\n"), nil
}

// converged waits until both replicas transfer the same records and every
// secondary holds those records at the serial of one of them (the replicas'
// serials of the same content may differ: each replica numbers the changes
// by the second it saw them in).
func converged(t *testing.T, replicas []*server, peers []*daemon, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var why string
	for time.Now().Before(deadline) {
		why = ""
		s0, c0, err0 := zoneContent(replicas[0].port)
		s1, c1, err1 := zoneContent(replicas[1].port)
		switch {
		case err0 != nil || err1 != nil:
			why = fmt.Sprintf("replicas: %v %v", err0, err1)
		case c0 != c1:
			why = fmt.Sprintf("the replicas differ (serials %d, %d)", s0, s1)
		}
		for _, p := range peers {
			if why != "" {
				break
			}
			s, c, err := zoneContent(p.port)
			switch {
			case err != nil:
				why = fmt.Sprintf("%s: %v", p.name, err)
			case s != s0 && s != s1:
				why = fmt.Sprintf("%s at serial %d, the replicas at %d and %d", p.name, s, s0, s1)
			case c != c0:
				why = fmt.Sprintf("%s at serial %d holds other records than the replicas:\n%s", p.name, s, lineDiff(c, c0))
			}
		}
		if why == "" {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("not converged after %s: %s", timeout, why)
}

// lineDiff lists the lines only in got (+) and only in want (-).
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var out []string
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "  + "+l)
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "  - "+l)
		}
	}
	return strings.Join(out, "\n")
}

// transfersOf says how many transfers a secondary logged, and how many of
// them were IXFRs it refused as inconsistent with its copy (and replaced by
// a whole transfer): Knot tells incremental from whole, BIND does not.
func transfersOf(d *daemon) string {
	var ixfr, axfr, done, refused int
	for _, l := range strings.Split(d.output(), "\n") {
		switch {
		case strings.Contains(l, "IXFR, incoming") && strings.Contains(l, "finished"):
			ixfr++
		case strings.Contains(l, "AXFR, incoming") && strings.Contains(l, "finished"):
			axfr++
		case strings.Contains(l, "Transfer completed"):
			done++
		case strings.Contains(l, "failed to apply changes to zone"), strings.Contains(l, "Transfer status: IXFR failed"):
			refused++
		}
	}
	if d.name == "knot" {
		return fmt.Sprintf("%d incremental and %d whole transfers, %d IXFRs refused as inconsistent", ixfr, axfr, refused)
	}
	return fmt.Sprintf("%d transfers, %d IXFRs refused as inconsistent", done, refused)
}

// forwarder hands each UDP query and each TCP connection it receives to the
// next of its backends in turn, as a Service's load balancing does.
type forwarder struct {
	port     int
	backends []string
	next     atomic.Uint64
	udp, tcp atomic.Int64
}

// startForwarder listens on a free port of 127.0.0.1, UDP and TCP, until
// the test ends.
func startForwarder(t *testing.T, ports ...int) *forwarder {
	t.Helper()
	f := &forwarder{}
	for _, p := range ports {
		f.backends = append(f.backends, fmt.Sprintf("127.0.0.1:%d", p))
	}
	var pc net.PacketConn
	var ln net.Listener
	for range 10 {
		f.port = freePort(t)
		var err error
		if pc, err = net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", f.port)); err != nil {
			continue
		}
		if ln, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", f.port)); err != nil {
			pc.Close()
			continue
		}
		break
	}
	if ln == nil {
		t.Fatal("no port free for the forwarder")
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { pc.Close(); ln.Close(); wg.Wait() })
	wg.Go(func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := slices.Clone(buf[:n])
			backend := f.pick()
			f.udp.Add(1)
			wg.Go(func() {
				c, err := net.Dial("udp", backend)
				if err != nil {
					return
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(3 * time.Second))
				if _, err := c.Write(q); err != nil {
					return
				}
				reply := make([]byte, 65535)
				if n, err := c.Read(reply); err == nil {
					pc.WriteTo(reply[:n], from)
				}
			})
		}
	})
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			backend := f.pick()
			f.tcp.Add(1)
			wg.Go(func() {
				defer in.Close()
				out, err := net.Dial("tcp", backend)
				if err != nil {
					return
				}
				defer out.Close()
				done := make(chan struct{})
				go func() { io.Copy(out, in); out.(*net.TCPConn).CloseWrite(); close(done) }()
				io.Copy(in, out)
				in.(*net.TCPConn).CloseWrite()
				<-done
			})
		}
	})
	return f
}

func (f *forwarder) pick() string {
	return f.backends[(f.next.Add(1)-1)%uint64(len(f.backends))]
}
