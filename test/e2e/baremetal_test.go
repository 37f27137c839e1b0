//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// TestBareMetal is the whole bare-metal stack, for real: MetalLB's
// controller assigns the LoadBalancer addresses, Traefik's providers write
// the status of Ingresses, Gateways and routes, the chart's Corefile runs the
// plugin, and a validating unbound finds it through a signed test root and a
// BIND parent that hold the NS, glue and DS records the chart's NOTES name.
// No test writes a status.
//
// The plugin runs as a process with the chart's Corefile, not as the
// chart's pod: without a speaker, no MetalLB address is reachable. Its
// Service gets its address from a MetalLB pool of one loopback address, on
// which the process listens, so the glue the NOTES print is an address that
// answers; every other address comes from 192.0.2.0/24 and 2001:db8::/64 and
// is never sent anything (the resolver refuses to query outside 127/8).
func TestBareMetal(t *testing.T) {
	skip, err := harness.NeedsRoot("the bare-metal stage", "K8SGW_SKIP_BAREMETAL", "its DNS servers answer on port 53 of loopback addresses of their own")
	if err != nil {
		t.Fatal(err)
	}
	if skip != "" {
		t.Skip(skip)
	}
	bm := startBareMetal(t)
	t.Run("docs", bm.testDocs)
	t.Run("delegation", bm.testDelegation)
	t.Run("metallb", bm.testMetalLB)
	bm.traefik = bm.startTraefik(t)
	t.Run("traefik", bm.testTraefik)
	t.Run("timing", bm.testTiming)
}

// ttl is the chart's ttl value in the stage: the resolver may serve an
// answer that long after it changed.
const bareMetalTTL = 5

type bareMetal struct {
	ns      string
	dnsAddr string // the plugin's address: its Service's, from MetalLB
	metallb *controller
	plugin  *server
	parents *parents
	unbound *daemon
	traefik *traefikStack
}

func startBareMetal(t *testing.T) *bareMetal {
	bareMetalBin(t)
	chartHelm(t)
	ensureTraefikCRDs(t)
	bm := &bareMetal{ns: namespace(t), dnsAddr: loopbackAddr(t)}
	bm.metallb = startMetalLB(t, bm.ns, fmt.Sprintf(`
apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata: {name: dns}
spec: {addresses: [%s/32], autoAssign: false}
---
apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata: {name: apps}
spec: {addresses: [192.0.2.0/26, "2001:db8::/120"]}
---
apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata: {name: tiny}
spec: {addresses: [192.0.2.250/32], autoAssign: false}
`, bm.dnsAddr))

	// The chart, as a user installs it, with its Service in the pool dns.
	values := fmt.Sprintf(`domain: example.com
ttl: %d
service:
  loadBalancerClass: %s
  annotations: {metallb.universe.tf/address-pool: dns}
dnssec: {keySecret: k8sgw-dnssec, keyName: Kexample.com.+013+01234}
`, bareMetalTTL, lbClass)
	notes := chartHelmOut(t, "install", "k8s-gateway", chartDir, "--namespace", bm.ns, "-f", chartValuesFile(t, values))
	t.Cleanup(func() { chartHelmRun(t, "uninstall", "k8s-gateway", "--namespace", bm.ns) })

	// NOTES step 1: the Service's external address, from MetalLB.
	if got := waitLB(t, bm.ns, "k8s-gateway", bm.metallb); got != bm.dnsAddr {
		t.Fatalf("MetalLB gave the chart's Service %q, want %s (pool dns)", got, bm.dnsAddr)
	}
	// NOTES step 2: the delegation records, with that address as the glue.
	delegation := notesDelegation(t, notes, bm.dnsAddr)
	nsName := "k8s-gateway." + bm.ns + ".example.com."
	want := []string{"example.com. 300 IN NS " + nsName, nsName + " 300 IN A " + bm.dnsAddr}
	if !slices.Equal(delegation, want) {
		t.Fatalf("NOTES delegation records %q, want %q\n%s", delegation, want, notes)
	}

	// The Corefile of the release's ConfigMap, on the Service's address.
	cm := kubectl(t, "", "-n", bm.ns, "get", "configmap", "k8s-gateway", "-o", "go-template={{index .data \"Corefile\"}}")
	rel := chartLocalCorefile(t, map[string]string{"Corefile": cm})
	path := filepath.Join(repoRoot, rel)
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	local := strings.ReplaceAll(string(text), "bind 127.0.0.1", "bind "+bm.dnsAddr)
	local = strings.ReplaceAll(local, ":{$K8S_GATEWAY_PORT}", ":53")
	if err := os.WriteFile(path, []byte(local), 0o644); err != nil {
		t.Fatal(err)
	}
	keys, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "Kexample.com.+*.key"))
	if len(keys) != 1 {
		t.Fatalf("the chart's Corefile got %d keys, want 1: %q", len(keys), keys)
	}
	bm.plugin = startServer(t, rel, tokenKubeconfig(t, bm.ns, "k8s-gateway"))

	bm.parents = startParents(t, delegation, dsFromKey(t, keys[0]))
	bm.unbound = startResolver(t, "unbound", bm.parents)
	return bm
}

// notesDelegation returns the NS and glue records of NOTES step 2, with a TTL
// of 300 and <address> replaced by addr.
func notesDelegation(t *testing.T, notes, addr string) []string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\s+(\S+\.)\s+IN\s+(NS|A)\s+(\S+)\s*$`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(notes, -1) {
		out = append(out, m[1]+" 300 IN "+m[2]+" "+strings.ReplaceAll(m[3], "<address>", addr))
	}
	return out
}

// answer is what a server says for a name: the data of the records of the
// type asked, sorted, and whether it validated.
type answer struct {
	Rcode string
	Data  []string
	AD    bool
	TTLs  []string
}

func ask(addr string, port int, name, qtype string, opts ...string) (answer, error) {
	r, err := resolveAt(addr, port, name, qtype, opts...)
	if err != nil {
		return answer{}, err
	}
	a := answer{Rcode: r.Rcode, AD: r.AD()}
	for _, rr := range r.Answer {
		if fieldN(rr, 3) == qtype && strings.EqualFold(fieldN(rr, 0), name) {
			a.Data = append(a.Data, strings.Join(strings.Fields(rr)[4:], " "))
			a.TTLs = append(a.TTLs, fieldN(rr, 1))
		}
	}
	slices.Sort(a.Data)
	return a, nil
}

// waitAnswer asks addr:port until the records of qtype at name are want (none:
// the name has none) and, with validated, the answer has the AD bit; it
// returns how long that took.
func waitAnswer(t *testing.T, who, addr string, port int, name, qtype string, validated bool, timeout time.Duration, want ...string) time.Duration {
	t.Helper()
	slices.Sort(want)
	start := time.Now()
	var last answer
	var err error
	for {
		last, err = ask(addr, port, name, qtype)
		if err == nil && slices.Equal(last.Data, want) && (!validated || last.AD) &&
			(last.Rcode == "NOERROR" || len(want) == 0 && last.Rcode == "NXDOMAIN") {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("%s, %s %s after %s: %+v %v; want %q (validated %v)", who, name, qtype, timeout, last, err, want, validated)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// atPlugin waits until the plugin itself answers want for name.
func (bm *bareMetal) atPlugin(t *testing.T, name, qtype string, want ...string) time.Duration {
	t.Helper()
	return waitAnswer(t, "plugin", bm.dnsAddr, 53, name, qtype, false, 30*time.Second, want...)
}

// atResolver waits until unbound answers want for name, validated; the
// plugin answers first, so that no negative answer is cached on the way.
func (bm *bareMetal) atResolver(t *testing.T, name, qtype string, want ...string) {
	t.Helper()
	bm.atPlugin(t, name, qtype, want...)
	waitAnswer(t, "resolver", "127.0.0.1", bm.unbound.port, name, qtype, true, (bareMetalTTL+10)*time.Second, want...)
}

func (bm *bareMetal) name(label string) string { return label + "." + bm.ns + ".example.com." }

// testDelegation: the resolver finds the zone through the parent, validated
// through the chain from the test root, and the plugin's own name (the NS
// target) answers the address MetalLB gave its Service.
func (bm *bareMetal) testDelegation(t *testing.T) {
	nsName := bm.name("k8s-gateway")
	bm.atResolver(t, "example.com.", "NS", nsName)
	bm.atResolver(t, nsName, "A", bm.dnsAddr)
	if a, err := ask("127.0.0.1", bm.unbound.port, "example.com.", "SOA"); err != nil || !a.AD || len(a.Data) != 1 {
		t.Errorf("resolver, example.com. SOA: %+v %v, want one SOA, validated", a, err)
	}
	// The parent refers, it does not answer.
	if r, err := resolveAt(bm.parents.addr, 53, nsName, "A", "+norecurse"); err != nil || len(r.Answer) != 0 ||
		!slices.ContainsFunc(r.Authority, func(rr string) bool { return strings.HasPrefix(rr, "example.com. ") && fieldN(rr, 3) == "NS" }) {
		t.Errorf("parent, %s A: %s %v, want a referral to example.com", nsName, r, err)
	}
}
