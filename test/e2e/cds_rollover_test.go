//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// cdsCorefile is the child: k8s_gateway for example.com signed by the dnssec
// plugin with the keys %[1]s, publishing CDS/CDNSKEY (%[2]s: "cds" or
// "cds delete"); records have a TTL of 2 s.
const cdsCorefile = `example.com:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    dnssec {
        key file %[1]s
    }
    k8s_gateway {
        kubeconfig {$KUBECONFIG}
        apex dns1.kube-system
        ttl 2
        %[2]s
    }
}
`

// rolloverKey makes a key of example.com with the SEP flag (a CSK) and a
// DNSKEY TTL of 5 s, and returns its file name without extension and its
// key tag.
func rolloverKey(t *testing.T, dir string) (file, tag string) {
	t.Helper()
	out, err := exec.Command(sbin(t, "dnssec-keygen"), "-q", "-K", dir, "-a", "ECDSAP256SHA256", "-f", "KSK", "-L", "5", "-n", "ZONE", "example.com").CombinedOutput()
	if err != nil {
		t.Fatalf("dnssec-keygen: %v\n%s", err, out)
	}
	base := strings.TrimSpace(string(out)) // Kexample.com.+013+12345
	tag = strings.TrimLeft(base[strings.LastIndex(base, "+")+1:], "0")
	if tag == "" {
		tag = "0"
	}
	return filepath.Join(dir, base), tag
}

// validation is what the poller saw of the child's name through unbound.
type validation struct {
	mu               sync.Mutex
	secure           bool // AD is required
	queries, secured int
	failures         []string
}

// pollValidation asks unbound for name every 100 ms until stop is closed:
// every answer must be the address want, with AD while v.secure.
func pollValidation(port int, name, want string, v *validation, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		r, err := resolve(port, name, "A")
		v.mu.Lock()
		v.queries++
		ok := err == nil && r.Rcode == "NOERROR" && len(r.Answer) > 0 && strings.HasSuffix(r.Answer[0], " A "+want)
		switch {
		case !ok || (v.secure && !r.AD()):
			v.failures = append(v.failures, fmt.Sprintf("%s secure=%v: %v %v", time.Now().UTC().Format("15:04:05.000"), v.secure, r, err))
		case r.AD():
			v.secured++
		}
		v.mu.Unlock()
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestCDSKeyRollover: a double-KSK rollover of a zone signed by the dnssec
// plugin, with the parent's DS following the cds option's CDS records through
// a parent-side agent (dig, dnssec-cds, nsupdate with TSIG) against a signed
// BIND parent; unbound, trusting only the parent's key, resolves a name of
// the child with AD at every moment. Then cds delete: the parent removes the
// DS and the name resolves, insecure.
func TestCDSKeyRollover(t *testing.T) {
	parentPort := freePort(t)
	secret := tsigSecret(t)
	_, anchor := startSignedParent(t, parentPort, secret)

	keys := t.TempDir()
	k1, tag1 := rolloverKey(t, keys)
	dir := t.TempDir()
	corefile := filepath.Join(dir, "Corefile")
	write := func(keyFiles, cds string) {
		writeFile(t, corefile, fmt.Sprintf(cdsCorefile, keyFiles, cds))
	}
	write(k1, "cds")
	rel, err := filepath.Rel(repoRoot, corefile)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, rel, kubeconfig)
	nameserverService(t, "127.0.0.1")
	ns := namespace(t)
	applyLB(t, ns, "192.0.2.80")
	name := "lb." + ns + ".example.com."
	s.eventually(t, 10*time.Second, name, dns.TypeA, positive(name+" 2 IN A 192.0.2.80"))

	// unbound: com. and example.com. as stub zones, the parent's KSK as
	// the only trust anchor; nothing is cached longer than the TTLs.
	unboundDir, unboundPort := t.TempDir(), freePort(t)
	conf := renderConfig(t, "test/e2e/testdata/unbound.conf", map[string]string{
		"DIR": unboundDir, "PORT": strconv.Itoa(unboundPort), "PRIMARY_PORT": strconv.Itoa(s.port), "TRUST_ANCHOR": anchor,
	})
	conf += fmt.Sprintf("\nstub-zone:\n    name: \"com\"\n    stub-addr: 127.0.0.1@%d\n", parentPort)
	writeFile(t, filepath.Join(unboundDir, "unbound.conf"), conf)
	startDaemon(t, "unbound", unboundDir, unboundPort, sbin(t, "unbound"), "-d", "-c", filepath.Join(unboundDir, "unbound.conf"))

	// Before any DS: the child is an insecure delegation.
	var first resolution
	deadline := time.Now().Add(10 * time.Second)
	for {
		first, err = resolve(unboundPort, name, "A")
		if err == nil && first.Rcode == "NOERROR" && len(first.Answer) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("unbound does not resolve %s: %v %v", name, first, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if first.AD() {
		t.Fatalf("AD set before the parent has a DS: %v", first)
	}

	agent := newCDSAgent(t, s.port, parentPort, secret)
	agent.bootstrap()
	waitTags(t, "parent DS after bootstrap", 10*time.Second, func() []string { return parentDS(t, parentPort) }, tag1)
	time.Sleep((dsTTL + 1) * time.Second) // the negative DS answer expires in unbound
	if r, err := resolve(unboundPort, name, "A"); err != nil || !r.AD() {
		t.Fatalf("not secure with the DS of key %s in the parent: %v %v", tag1, r, err)
	}

	v := &validation{secure: true}
	stopPoll, pollDone := make(chan struct{}), make(chan struct{})
	go pollValidation(unboundPort, name, "192.0.2.80", v, stopPoll, pollDone)
	stopAgent, agentDone := make(chan struct{}), make(chan struct{})
	go agent.loop(time.Second, stopAgent, agentDone)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			close(stopAgent)
			close(stopPoll)
			<-agentDone
			<-pollDone
		}
	}
	defer stop()

	// step reloads the child with keyFiles and the cds option, and measures
	// until the child's CDS and then the parent's DS are as wanted.
	step := func(what, keyFiles, cds string, cdsTags, dsTags []string) {
		t.Helper()
		write(keyFiles, cds)
		s.Signal(syscall.SIGUSR1)
		tc := waitTags(t, what+": child CDS", 30*time.Second, func() []string { return childCDS(t, s.port) }, cdsTags...)
		td := waitTags(t, what+": parent DS", 30*time.Second, func() []string { return parentDS(t, parentPort) }, dsTags...)
		t.Logf("%s: CDS %v %s after the reload, DS %v in the parent %s later", what, cdsTags, tc.Round(time.Millisecond), dsTags, td.Round(time.Millisecond))
	}
	// Caches that hold the old DNSKEY or DS RRset must expire before the
	// next step relies on the new one.
	wait := func() { time.Sleep((dsTTL + 2) * time.Second) }

	wait()
	k2, tag2 := rolloverKey(t, keys)
	step("new key published", k1+" "+k2, "cds", []string{tag1, tag2}, []string{tag1, tag2})
	wait()
	step("old key removed", k2, "cds", []string{tag2}, []string{tag2})
	wait()
	v.mu.Lock()
	rolloverQueries, rolloverFailures := v.queries, len(v.failures)
	v.mu.Unlock()

	// cds delete: the parent removes the DS; AD may go, answers may not.
	write(k2, "cds delete")
	s.Signal(syscall.SIGUSR1)
	tc := waitTags(t, "cds delete: child CDS", 30*time.Second, func() []string { return childCDS(t, s.port) }, "0")
	v.mu.Lock()
	v.secure = false
	v.mu.Unlock()
	td := waitTags(t, "cds delete: parent DS", 30*time.Second, func() []string { return parentDS(t, parentPort) })
	t.Logf("cds delete: delete CDS %s after the reload, DS gone from the parent %s later", tc.Round(time.Millisecond), td.Round(time.Millisecond))
	time.Sleep((dsTTL + 2) * time.Second)
	stop()
	if r, err := resolve(unboundPort, name, "A"); err != nil || r.Rcode != "NOERROR" || r.AD() || len(r.Answer) == 0 {
		t.Errorf("after the DS is gone: %v %v, want an insecure answer", r, err)
	}
	t.Logf("unbound: %d queries during the rollover; %d in all, %d with AD; agent: %d runs, %d changes, %d failed (last: %s)",
		rolloverQueries, v.queries, v.secured, agent.runs, agent.changes, agent.failures, agent.lastErr)
	if rolloverFailures > 0 || len(v.failures) > 0 {
		t.Errorf("unbound answers that were not right (%d of %d):\n%s", len(v.failures), v.queries, strings.Join(v.failures, "\n"))
	}
	// A pass that reads the child while a reload swaps its instances may
	// see the keys of one and the CDS of the other, and dnssec-cds then
	// refuses; the next pass (a second later, as a cron job would) succeeds.
	// The DS waits above show the agent did its work; a failure in more
	// than one pass in five is not such a moment.
	if agent.failures > 0 {
		t.Logf("the agent failed %d times; last:\n%s", agent.failures, agent.lastErr)
	}
	if agent.failures*5 > agent.runs {
		t.Errorf("the agent failed %d of %d passes; last:\n%s", agent.failures, agent.runs, agent.lastErr)
	}
}
