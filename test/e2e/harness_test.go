//go:build e2e

package e2e

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// kubectl runs kubectl against the test cluster, with stdin when not empty.
func kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	return harness.MustKubectl(t, kubectlBin, kubeconfig, stdin, args...)
}

func kubectlErr(stdin string, args ...string) (string, error) {
	return harness.Kubectl(kubectlBin, kubeconfig, stdin, args...)
}

// waitEstablished waits until the CRDs (as "crd/NAME") are established.
// kubectl wait fails at once, instead of waiting, on a CRD so new that its
// status has no conditions yet; that is retried until the timeout.
func waitEstablished(t *testing.T, crds ...string) {
	t.Helper()
	if out, err := waitEstablishedErr(crds...); err != nil {
		t.Fatalf("kubectl wait for %s established: %v\n%s", strings.Join(crds, " "), err, out)
	}
}

func waitEstablishedErr(crds ...string) (string, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := kubectlErr("", append([]string{"wait", "--for", "condition=established", "--timeout=60s"}, crds...)...)
		if err == nil || !strings.Contains(out, "accessor error") || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// namespace creates a namespace for one test and deletes it afterwards.
func namespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("e2e-%s-%04d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), rand.IntN(10000))
	if len(ns) > 63 {
		ns = ns[len(ns)-63:]
		ns = "e" + strings.TrimLeft(ns[1:], "-")
	}
	kubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectlErr("", "delete", "namespace", ns, "--wait=false") })
	return ns
}

// setLBStatus sets the load balancer addresses of an object through its status subresource.
func setLBStatus(t *testing.T, ns, resource, name string, addrs ...string) {
	t.Helper()
	var items []string
	for _, a := range addrs {
		if net.ParseIP(a) != nil {
			items = append(items, fmt.Sprintf(`{"ip":%q}`, a))
		} else {
			items = append(items, fmt.Sprintf(`{"hostname":%q}`, a))
		}
	}
	patch := fmt.Sprintf(`{"status":{"loadBalancer":{"ingress":[%s]}}}`, strings.Join(items, ","))
	kubectl(t, "", "-n", ns, "patch", resource, name, "--subresource=status", "--type=merge", "-p", patch)
}

// server is a running coredns binary.
type server struct {
	harness.Server
	t         *testing.T
	port      int
	readyPort int
}

// startServer runs coredns with the Corefile at path (relative to the
// repository) and the given kubeconfig, and waits until /ready passes. The
// Corefile sees $KUBECONFIG, $K8S_GATEWAY_PORT, $K8S_GATEWAY_READY_PORT,
// $K8S_GATEWAY_TESTDATA (test/e2e/testdata) and any NAME=VALUE in env.
func startServer(t *testing.T, corefile, kubecfg string, env ...string) *server {
	t.Helper()
	return startServerBinary(t, corednsBin, corefile, kubecfg, env...)
}

// startServerBinary is startServer with another coredns binary.
func startServerBinary(t *testing.T, binary, corefile, kubecfg string, env ...string) *server {
	t.Helper()
	s := launchServer(t, binary, corefile, kubecfg, env...)
	s.waitReady(60 * time.Second)
	return s
}

// launchServer is startServerBinary without the wait for /ready.
func launchServer(t *testing.T, binary, corefile, kubecfg string, env ...string) *server {
	t.Helper()
	s := newServer(t, binary, corefile, kubecfg, env...)
	s.launch()
	return s
}

// newServer is a server not started yet, stopped when the test ends.
func newServer(t *testing.T, binary, corefile, kubecfg string, env ...string) *server {
	t.Helper()
	s := &server{t: t, port: freePort(t), readyPort: freePort(t)}
	s.Binary, s.Corefile = binary, filepath.Join(repoRoot, corefile)
	s.ReadyURL = fmt.Sprintf("http://127.0.0.1:%d/ready", s.readyPort)
	s.Env = append(os.Environ(),
		"KUBECONFIG="+kubecfg,
		"K8S_GATEWAY_PORT="+strconv.Itoa(s.port),
		"K8S_GATEWAY_READY_PORT="+strconv.Itoa(s.readyPort),
		"K8S_GATEWAY_TESTDATA="+filepath.Join(repoRoot, "test/e2e/testdata"),
	)
	s.Env = append(s.Env, env...)
	// Registered first: a server that never gets ready is stopped too.
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("coredns output:\n%s", s.output())
		}
	})
	return s
}

func (s *server) start() {
	s.t.Helper()
	s.launch()
	s.waitReady(60 * time.Second)
}

// launch runs the server's process.
func (s *server) launch() {
	s.t.Helper()
	if err := s.Start(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *server) waitReady(timeout time.Duration) {
	s.t.Helper()
	if err := s.WaitReady(50*time.Millisecond, timeout); err != nil {
		s.t.Fatal(err)
	}
}

func (s *server) stop() { s.Stop() }

// output is what the latest run of the server printed.
func (s *server) output() string { return s.Output() }

func freePort(t *testing.T) int { return harness.FreePort(t) }

// reply is a DNS answer reduced to what the tests compare.
type reply struct {
	Rcode      string
	AA         bool
	Answer     []string
	Authority  []string
	Additional []string
}

func (r reply) String() string {
	return fmt.Sprintf("rcode=%s aa=%v\n  answer: %q\n  authority: %q\n  additional: %q", r.Rcode, r.AA, r.Answer, r.Authority, r.Additional)
}

// query asks the server with the Go client.
func (s *server) query(name string, qtype uint16) (reply, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	c := &dns.Client{Timeout: 2 * time.Second}
	in, _, err := c.Exchange(m, fmt.Sprintf("127.0.0.1:%d", s.port))
	if err != nil {
		return reply{}, err
	}
	r := reply{Rcode: dns.RcodeToString[in.Rcode], AA: in.Authoritative}
	r.Answer, r.Authority, r.Additional = rrStrings(in.Answer), rrStrings(in.Ns), rrStrings(in.Extra)
	return r, nil
}

func rrStrings(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		out = append(out, strings.Join(strings.Fields(rr.String()), " "))
	}
	slices.Sort(out)
	return out
}

// dig asks the server with Debian's dig and parses its output.
func (s *server) dig(name, qtype string, opts ...string) (reply, error) {
	args := append([]string{"@127.0.0.1", "-p", strconv.Itoa(s.port), "+tries=1", "+time=2", "+norecurse", name, qtype}, opts...)
	out, err := exec.Command(digBin, args...).CombinedOutput()
	if err != nil {
		return reply{}, fmt.Errorf("dig %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var r reply
	section := ""
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.Contains(line, "->>HEADER<<-"):
			if i := strings.Index(line, "status: "); i >= 0 {
				r.Rcode = strings.TrimSuffix(strings.Fields(line[i+8:])[0], ",")
			}
		case strings.HasPrefix(line, ";; flags:"):
			flags := strings.Fields(strings.SplitN(strings.TrimPrefix(line, ";; flags:"), ";", 2)[0])
			r.AA = slices.Contains(flags, "aa")
		case strings.HasPrefix(line, ";; ANSWER SECTION"):
			section = "answer"
		case strings.HasPrefix(line, ";; AUTHORITY SECTION"):
			section = "authority"
		case strings.HasPrefix(line, ";; ADDITIONAL SECTION"):
			section = "additional"
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, ";"):
			if strings.TrimSpace(line) == "" {
				section = ""
			}
		default:
			rr := strings.Join(strings.Fields(line), " ")
			switch section {
			case "answer":
				r.Answer = append(r.Answer, rr)
			case "authority":
				r.Authority = append(r.Authority, rr)
			case "additional":
				r.Additional = append(r.Additional, rr)
			}
		}
	}
	slices.Sort(r.Answer)
	slices.Sort(r.Authority)
	slices.Sort(r.Additional)
	if r.Rcode == "" {
		return r, fmt.Errorf("dig printed no status:\n%s", out)
	}
	return r, nil
}

// ask queries with both the Go client and dig and returns the answer when
// they agree.
func (s *server) ask(name string, qtype uint16) (reply, error) {
	// The zone can change between the two queries (a serial bump from
	// another test's objects being deleted): a disagreement is asked again,
	// a few times, before it counts.
	var viaGo, viaDig reply
	for range 3 {
		var err error
		if viaGo, err = s.query(name, qtype); err != nil {
			return reply{}, err
		}
		if viaDig, err = s.dig(name, dns.TypeToString[qtype]); err != nil {
			return reply{}, err
		}
		if viaGo.String() == viaDig.String() {
			return viaGo, nil
		}
	}
	return reply{}, fmt.Errorf("dig and the Go client disagree:\ngo:  %s\ndig: %s", viaGo, viaDig)
}

// expectation is what a query must return. Answer records are compared
// exactly (sorted, whitespace folded); Authority lists the record types
// expected there (the SOA serial changes, so SOA records are checked by type).
type expectation struct {
	Rcode     string
	Answer    []string
	Authority []string // types, e.g. "SOA"
	Extra     []string
}

func (e expectation) check(r reply) error {
	if r.Rcode != e.Rcode || !r.AA {
		return fmt.Errorf("got %s, want rcode %s with aa", r, e.Rcode)
	}
	want := slices.Clone(e.Answer)
	slices.Sort(want)
	if !slices.Equal(r.Answer, want) && !(len(want) == 0 && len(r.Answer) == 0) {
		return fmt.Errorf("answer: got %q, want %q", r.Answer, want)
	}
	var types []string
	for _, rr := range r.Authority {
		if f := strings.Fields(rr); len(f) > 3 {
			types = append(types, f[3])
		}
	}
	if !slices.Equal(types, e.Authority) && !(len(types) == 0 && len(e.Authority) == 0) {
		return fmt.Errorf("authority: got %q, want types %q", r.Authority, e.Authority)
	}
	extra := slices.Clone(e.Extra)
	slices.Sort(extra)
	if !slices.Equal(r.Additional, extra) && !(len(extra) == 0 && len(r.Additional) == 0) {
		return fmt.Errorf("additional: got %q, want %q", r.Additional, extra)
	}
	return nil
}

// eventually polls until name/qtype answers as expected, failing the test
// after timeout, and returns how long it took.
func (s *server) eventually(t *testing.T, timeout time.Duration, name string, qtype uint16, want expectation) time.Duration {
	t.Helper()
	start := time.Now()
	var last error
	for time.Since(start) < timeout {
		r, err := s.ask(name, qtype)
		if err == nil {
			if last = want.check(r); last == nil {
				return time.Since(start)
			}
		} else {
			last = err
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s %s: not as expected after %s: %v", name, dns.TypeToString[qtype], timeout, last)
	return 0
}

// nxdomain and nodata are the negative expectations.
var (
	nxdomain = expectation{Rcode: "NXDOMAIN", Authority: []string{"SOA"}}
	nodata   = expectation{Rcode: "NOERROR", Authority: []string{"SOA"}}
)

func positive(rrs ...string) expectation { return expectation{Rcode: "NOERROR", Answer: rrs} }

// webServiceYAML is a LoadBalancer Service "web" in namespace %[1]s with a
// hostname annotation (a relative name and a wildcard) and a named port.
const webServiceYAML = `
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: %[1]s
  annotations: {coredns.io/hostname: "www.%[1]s, *.apps.%[1]s.example.com"}
spec:
  type: LoadBalancer
  ports: [{name: https, port: 443, protocol: TCP}]
`

// nameserverService creates the nameserver's own Service, kube-system/dns1,
// with the given load balancer addresses; it gives the glue of the apex NS.
func nameserverService(t *testing.T, addrs ...string) {
	t.Helper()
	kubectl(t, `
apiVersion: v1
kind: Service
metadata: {name: dns1, namespace: kube-system}
spec:
  type: LoadBalancer
  ports: [{name: dns, port: 53, protocol: UDP}]
`, "apply", "-f", "-")
	t.Cleanup(func() { kubectlErr("", "-n", "kube-system", "delete", "service", "dns1") })
	setLBStatus(t, "kube-system", "service", "dns1", addrs...)
}

// applyLB creates the LoadBalancer Service "lb" in ns and gives it the
// addresses addrs in its status.
func applyLB(t *testing.T, ns string, addrs ...string) {
	t.Helper()
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: %s}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "lb", addrs...)
}

// lbService creates the LoadBalancer Service "lb" in ns with the address ip
// and waits until s answers its name, which it returns.
func lbService(t *testing.T, s *server, ns, ip string) string {
	t.Helper()
	applyLB(t, ns, ip)
	lb := "lb." + ns + ".example.com."
	s.eventually(t, 5*time.Second, lb, dns.TypeA, positive(lb+" 30 IN A "+ip))
	return lb
}

// stopAPIServer stops the suite's kube-apiserver (etcd keeps the data) and
// returns the function that starts it again; it is started when the test
// ends in any case.
func stopAPIServer(t *testing.T) (start func()) {
	t.Helper()
	if err := clusterScript("stop-apiserver"); err != nil {
		t.Fatal(err)
	}
	started := false
	t.Cleanup(func() {
		if !started {
			clusterScript("start-apiserver")
		}
	})
	return func() {
		t.Helper()
		if err := clusterScript("start-apiserver"); err != nil {
			t.Fatal(err)
		}
		started = true
	}
}
