//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy/caddyfile"
	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
)

// The zones tests run every example Corefile, and Corefiles the chart
// renders, and check each zone of the k8s_gateway block as a secondary would
// see it: its AXFR passes named-checkzone, and every NS name of the zone
// resolves to addresses through the server itself.

// tempCorefile writes a Corefile for one test and returns its path relative
// to the repository, as startServer takes it.
func tempCorefile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(repoRoot, path)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// nameserverServices creates the nameserver Services kube-system/dns1 and
// kube-system/dns2 (the apex and secondary of the examples) with addresses.
func nameserverServices(t *testing.T) {
	t.Helper()
	for i, name := range []string{"dns1", "dns2"} {
		kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: %s, namespace: kube-system}
spec:
  type: LoadBalancer
  ports: [{name: dns, port: 53, protocol: UDP}]
`, name), "apply", "-f", "-")
		t.Cleanup(func() { kubectlErr("", "-n", "kube-system", "delete", "service", name) })
		setLBStatus(t, "kube-system", "service", name, fmt.Sprintf("192.0.2.%d", 53+i), fmt.Sprintf("2001:db8::%d", 53+i))
	}
}

// withTransfer writes a copy of the Corefile at path (absolute) in which every
// server block without a transfer plugin gets `transfer { to * }`, so that its
// zones can be dumped with AXFR, and returns the copy's path relative to the
// repository. Everything else stays as it is.
func withTransfer(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	var out []string
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		out = append(out, line)
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || !strings.HasSuffix(strings.TrimSpace(line), "{") {
			continue
		}
		// The block's own lines, up to its closing brace at column 0.
		has := false
		for _, l := range lines[i+1:] {
			if strings.HasPrefix(l, "}") {
				break
			}
			has = has || strings.HasPrefix(strings.TrimSpace(l), "transfer")
		}
		if !has {
			out = append(out, "    transfer {", "        to *", "    }")
		}
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(dst, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(repoRoot, dst)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// gatewayZones returns the zones of the k8s_gateway directive of a Corefile:
// its arguments, else the keys of its server block.
func gatewayZones(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blocks, err := caddyfile.Parse(path, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		toks, ok := b.Tokens["k8s_gateway"]
		if !ok {
			continue
		}
		var zones []string
		for _, tok := range toks[1:] {
			if tok.Line != toks[0].Line || tok.Text == "{" {
				break
			}
			zones = append(zones, dns.Fqdn(strings.ToLower(tok.Text)))
		}
		if len(zones) > 0 {
			return zones
		}
		for _, k := range b.Keys {
			k = strings.TrimPrefix(k, "dns://")
			if i := strings.LastIndex(k, ":"); i >= 0 {
				k = k[:i]
			}
			zones = append(zones, dns.Fqdn(strings.ToLower(k)))
		}
		return zones
	}
	t.Fatalf("%s: no k8s_gateway directive", path)
	return nil
}

// transferHolding dumps a zone with dig args (ending in the zone and
// "AXFR") until the transfer holds every record of want, for at most five
// seconds, and returns the last dump. A change within the second of the
// zone's serial is answered at once but transferred under the next serial,
// up to a second later (docs/reference/answers.md).
func transferHolding(t *testing.T, want []string, args ...string) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		axfr := digLines(t, args...)
		if time.Now().After(deadline) || !slices.ContainsFunc(want, func(rr string) bool { return !slices.Contains(axfr, rr) }) {
			return axfr
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkZone dumps zone with AXFR from s once the transfer holds want,
// checks it with named-checkzone and checks that every NS name of the zone
// resolves to addresses through s. Objects of other tests may change the
// zone meanwhile: it tries again until the two dumps around the check agree.
func checkZone(t *testing.T, s *server, zone string, want ...string) []string {
	t.Helper()
	at := []string{"@127.0.0.1", "-p", strconv.Itoa(s.port)}
	var axfr []string
	for attempt := 1; ; attempt++ {
		axfr = transferHolding(t, want, append(at, zone, "AXFR")...)
		if len(axfr) < 3 || !strings.Contains(axfr[0], " SOA ") || axfr[0] != axfr[len(axfr)-1] {
			t.Fatalf("%s: AXFR not framed by the SOA:\n%s", zone, strings.Join(axfr, "\n"))
		}
		file := filepath.Join(t.TempDir(), "zone")
		if err := os.WriteFile(file, []byte(strings.Join(axfr[:len(axfr)-1], "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// -i local: integrity checks of in-zone data only (no lookups of other zones).
		out, err := exec.Command(sbin(t, "named-checkzone"), "-i", "local", zone, file).CombinedOutput()
		if err == nil && strings.Contains(string(out), "OK") {
			break
		}
		if again := digLines(t, append(at, zone, "AXFR")...); slices.Equal(again, axfr) || attempt == 5 {
			t.Errorf("%s: named-checkzone: %v\n%s\nzone:\n%s", zone, err, out, strings.Join(axfr, "\n"))
			return axfr
		}
		time.Sleep(time.Second)
	}
	nsNames := 0
	for _, rr := range axfr[:len(axfr)-1] {
		f := strings.Fields(rr)
		if len(f) != 5 || f[3] != "NS" || f[0] != zone {
			continue
		}
		nsNames++
		var addrs []string
		for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
			r, err := s.ask(f[4], qtype)
			if err != nil {
				t.Fatal(err)
			}
			if r.Rcode != "NOERROR" || !r.AA {
				t.Errorf("%s: NS name %s %s through the server: %s", zone, f[4], dns.TypeToString[qtype], r)
			}
			addrs = append(addrs, r.Answer...)
		}
		if len(addrs) == 0 {
			t.Errorf("%s: NS name %s has no addresses through the server itself", zone, f[4])
		}
	}
	if nsNames == 0 {
		t.Errorf("%s: AXFR without NS records at the apex:\n%s", zone, strings.Join(axfr, "\n"))
	}
	return axfr
}

// corefileFixtures are the Corefiles of test/e2e/testdata that need no
// objects or files beyond the Services of the nameservers.
var corefileFixtures = []string{"Corefile", "Corefile.dnssec", "Corefile.dual", "Corefile.fallthrough", "Corefile.multizone", "Corefile.primary", "Corefile.views"}

// TestExampleCorefileZones runs each of corefileFixtures and checks each of
// its zones: AXFR → named-checkzone, and every NS name resolving through the
// server itself.
func TestExampleCorefileZones(t *testing.T) {
	nameserverServices(t)
	var files []string
	for _, name := range corefileFixtures {
		files = append(files, filepath.Join(repoRoot, "test/e2e/testdata", name))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			env := []string{
				// Corefile.primary: NOTIFYs go nowhere; `to` allows 127.0.0.1.
				fmt.Sprintf("K8S_GATEWAY_SECONDARY1=127.0.0.1:%d", freePort(t)),
				fmt.Sprintf("K8S_GATEWAY_SECONDARY2=127.0.0.1:%d", freePort(t)),
			}
			if strings.HasSuffix(file, ".dnssec") || strings.HasSuffix(file, ".views") {
				key, _ := dnssecKey(t, t.TempDir())
				env = append(env, "K8S_GATEWAY_DNSSEC_KEY="+key)
			}
			if strings.HasSuffix(file, ".views") {
				// The zone is checked from 127.0.0.1: the external view,
				// whose transfer allows it (views_test.go checks both).
				env = append(env, "K8S_GATEWAY_INTERNAL_CLIENTS=127.0.0.2/32",
					fmt.Sprintf("K8S_GATEWAY_INTERNAL_SECONDARY=127.0.0.2:%d", freePort(t)),
					fmt.Sprintf("K8S_GATEWAY_EXTERNAL_SECONDARY=127.0.0.1:%d", freePort(t)))
			}
			s := startServer(t, withTransfer(t, file), kubeconfig, env...)
			for _, zone := range gatewayZones(t, file) {
				checkZone(t, s, zone)
			}
		})
	}
}

// TestReverseZoneRecords (addresses 192.0.2.230 and up, used by no other
// test, whose objects may still be being deleted): a DNSEndpoint publishes PTR records, an RFC 2317
// CNAME and an NS delegation in a reverse zone, next to the synthesised PTRs
// of a Service; the reverse zone's NS is the nameserver in the forward zone.
func TestReverseZoneRecords(t *testing.T) {
	chartEnsureCRDs(t, []string{"dnsendpoints.externaldns.k8s.io"}, false, filepath.Join(repoRoot, "test/e2e/testdata/dnsendpoint-crd.yaml"))
	nameserverServices(t)
	s := startServer(t, withTransfer(t, filepath.Join(repoRoot, "test/e2e/testdata/Corefile.multizone")), kubeconfig)
	ns := namespace(t)
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: web, namespace: %[1]s}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, ns), "apply", "-f", "-")
	chartKubectlRetrying(t, fmt.Sprintf(`
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata: {name: rev, namespace: %[1]s}
spec:
  endpoints:
  - {dnsName: 230.2.0.192.in-addr.arpa, recordType: PTR, targets: [www.%[1]s.example.com]}
  - {dnsName: 240.2.0.192.in-addr.arpa, recordType: CNAME, targets: [240.128/25.2.0.192.in-addr.arpa]}
  - {dnsName: 128/25.2.0.192.in-addr.arpa, recordType: NS, targets: [ns.example.net]}
`, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "web", "192.0.2.230")
	web := "web." + ns + ".example.com."
	rev := "2.0.192.in-addr.arpa."
	s.eventually(t, 5*time.Second, "230."+rev, dns.TypePTR, positive(
		"230."+rev+" 30 IN PTR "+web, "230."+rev+" 30 IN PTR web."+ns+".example.org.", "230."+rev+" 30 IN PTR www."+ns+".example.com."))
	r, err := s.ask("240."+rev, dns.TypePTR)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"240." + rev + " 30 IN CNAME 240.128/25." + rev}; r.Rcode != "NOERROR" || !r.AA || !slices.Equal(r.Answer, want) ||
		!slices.Equal(r.Authority, []string{"128/25." + rev + " 30 IN NS ns.example.net."}) {
		t.Errorf("240.%s PTR: %s, want the CNAME and the referral of the delegation", rev, r)
	}
	s.eventually(t, time.Second, rev, dns.TypeNS, expectation{
		Rcode:  "NOERROR",
		Answer: []string{rev + " 30 IN NS dns1.kube-system.example.com."},
		Extra:  []string{"dns1.kube-system.example.com. 30 IN A 192.0.2.53", "dns1.kube-system.example.com. 30 IN AAAA 2001:db8::53"},
	})
	wants := []string{
		"230." + rev + " 30 IN PTR " + web,
		"240." + rev + " 30 IN CNAME 240.128/25." + rev,
		"128/25." + rev + " 30 IN NS ns.example.net.",
		"53." + rev + " 30 IN PTR dns1.kube-system.example.com.",
	}
	axfr := checkZone(t, s, rev, wants...)
	for _, want := range wants {
		if !slices.Contains(axfr, want) {
			t.Errorf("AXFR of %s lacks %q", rev, want)
		}
	}
}

// TestChartCorefileZones renders the chart with several forward zones, a
// reverse zone and a secondary, runs its Corefile and checks every zone.
func TestChartCorefileZones(t *testing.T) {
	chartHelm(t)
	ns := namespace(t)
	m := chartRender(t, ns, "domain: example.com example.org 2.0.192.in-addr.arpa\nsecondary: dns2.kube-system\nttl: 30\n")
	cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "")
	nameserverServices(t)
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: k8s-gateway, namespace: %s}
spec:
  type: LoadBalancer
  ports: [{name: dns, port: 53, protocol: UDP}]
`, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "k8s-gateway", "192.0.2.70")
	path := chartLocalCorefile(t, cm.Data)
	s := startServer(t, withTransfer(t, filepath.Join(repoRoot, path)), kubeconfig)
	nsName := "k8s-gateway." + ns + ".example.com."
	s.eventually(t, 5*time.Second, nsName, dns.TypeA, positive(nsName+" 30 IN A 192.0.2.70"))
	for _, zone := range gatewayZones(t, filepath.Join(repoRoot, path)) {
		axfr := checkZone(t, s, zone)
		if zone == "2.0.192.in-addr.arpa." && !slices.Contains(axfr, zone+" 30 IN NS "+nsName) {
			t.Errorf("the reverse zone's NS is not %s:\n%s", nsName, strings.Join(axfr, "\n"))
		}
	}
}

// TestNestedZones: example.com. and a zone nested in it, a.b.<ns>.example.com.,
// in one block answer as a parent and a child zone on one server would.
func TestNestedZones(t *testing.T) {
	nameserverServices(t)
	ns := namespace(t)
	child := "a.b." + ns + ".example.com."
	rel := tempCorefile(t, fmt.Sprintf(`example.com:{$K8S_GATEWAY_PORT} %s:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    errors
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    transfer {
        to *
    }
    k8s_gateway {
        kubeconfig {$KUBECONFIG}
        apex dns1.kube-system
        ttl 30
    }
}
`, strings.TrimSuffix(child, ".")))
	s := startServer(t, rel, kubeconfig)
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: %[1]s
  annotations: {coredns.io/hostname: "*.%[1]s.example.com., www.%[2]s"}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, ns, child), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "web", "192.0.2.90")
	s.eventually(t, 5*time.Second, "x."+ns+".example.com.", dns.TypeA, positive("x."+ns+".example.com. 30 IN A 192.0.2.90"))
	s.eventually(t, time.Second, "www."+child, dns.TypeA, positive("www."+child+" 30 IN A 192.0.2.90"))
	// The empty non-terminal above the child, and no wildcard below it.
	s.eventually(t, time.Second, "b."+ns+".example.com.", dns.TypeA, nodata)
	s.eventually(t, time.Second, "x.b."+ns+".example.com.", dns.TypeA, nxdomain)
	// The child answers for itself; the parent's wildcard does not reach in.
	s.eventually(t, time.Second, "x."+child, dns.TypeA, nxdomain)
	s.eventually(t, time.Second, child, dns.TypeA, nodata)
	// DS at the cut comes from the parent: NODATA with the parent's SOA.
	r, err := s.ask(child, dns.TypeDS)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rcode != "NOERROR" || !r.AA || len(r.Answer) != 0 || len(r.Authority) != 1 || !strings.HasPrefix(r.Authority[0], "example.com. 30 IN SOA ") {
		t.Errorf("%s DS: %s, want NODATA with the SOA of example.com.", child, r)
	}
	delegation := []string{
		child + " 30 IN NS dns1.kube-system." + child,
		"dns1.kube-system." + child + " 30 IN A 192.0.2.53",
		"dns1.kube-system." + child + " 30 IN AAAA 2001:db8::53",
	}
	parent := checkZone(t, s, "example.com.", delegation...)
	for _, want := range delegation {
		if !slices.Contains(parent, want) {
			t.Errorf("the AXFR of example.com. lacks the delegation record %q", want)
		}
	}
	if slices.Contains(parent, "www."+child+" 30 IN A 192.0.2.90") {
		t.Error("the AXFR of example.com. holds the child's data")
	}
	checkZone(t, s, child)
}
