//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The traffic-steering tests: the geoip plugin reads an MMDB in the form of
// GeoLite2-City, written by MaxMind's writer library (test/mmdb, built by
// hack/geo.sh), that maps test networks only (documentation and
// benchmarking ranges, loopback) to locations. Like GeoLite2, it stores the
// subdivision part of an ISO 3166-2 code only (HE for DE-HE); 198.18.0.0/24
// has a custom database's cloud region instead.
var testNetworks = []string{
	"198.51.100.0/24=EU,DE,HE",
	"203.0.113.0/24=NA,US,CA",
	"192.0.2.0/24=OC,AU",
	"2001:db8:e::/48=EU,FR,IDF",
	"2001:db8:b::/48=EU,GB,ENG+CAM",
	"2001:db8:a::/48=NA,CA",
	"198.18.0.0/24=NA,US,us-east-1",
	"127.0.0.0/8=NA,US",
	"::1/128=EU,FR",
}

// testMMDB writes the tests' MMDB and returns its path.
func testMMDB(t *testing.T) string {
	t.Helper()
	script := filepath.Join(repoRoot, "hack/geo.sh")
	if out, err := exec.Command(script, "build").CombinedOutput(); err != nil {
		t.Fatalf("hack/geo.sh build: %v\n%s", err, out)
	}
	bin, err := exec.Command(script, "path").Output()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "test.mmdb")
	args := append([]string{"-o", path}, testNetworks...)
	if out, err := exec.Command(filepath.Join(strings.TrimSpace(string(bin)), "mmdb"), args...).CombinedOutput(); err != nil {
		t.Fatalf("mmdb: %v\n%s", err, out)
	}
	return path
}

// steeredService creates the LoadBalancer Service ns/name at hostname with
// the address ip and the given annotations (KEY: VALUE).
func steeredService(t *testing.T, kubecfg, ns, name, hostname, ip string, annotations ...string) {
	t.Helper()
	a := fmt.Sprintf("coredns.io/hostname: %q", hostname)
	for i := 0; i+1 < len(annotations); i += 2 {
		a += fmt.Sprintf(", %s: %q", annotations[i], annotations[i+1])
	}
	kubectlAt(t, kubecfg, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: %s, namespace: %s, annotations: {%s}}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, name, ns, a), "apply", "-f", "-")
	kubectlAt(t, kubecfg, "", "-n", ns, "patch", "service", name, "--subresource=status", "--type=merge",
		"-p", fmt.Sprintf(`{"status":{"loadBalancer":{"ingress":[{"ip":%q}]}}}`, ip))
}

var clientSubnet = regexp.MustCompile(`CLIENT-SUBNET: (\S+)`)

// geoAnswer is what dig or kdig got: the addresses of the answer and the
// ECS option of the reply ("" without one).
type geoAnswer struct {
	rcode  string
	addrs  []string
	subnet string
}

// askWith queries name A (or qtype) with tool (dig or kdig) and its options.
func (s *server) askWith(t *testing.T, tool, server, name, qtype string, opts ...string) geoAnswer {
	t.Helper()
	retry := []string{"+tries=1", "+time=2"}
	if tool == "kdig" {
		retry = []string{"+retry=0", "+timeout=2"}
	}
	args := append(append([]string{"@" + server, "-p", strconv.Itoa(s.port), "+norecurse", name, qtype}, retry...), opts...)
	out, err := exec.Command(tool, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
	var a geoAnswer
	if m := regexp.MustCompile(`status: (\w+)`).FindSubmatch(out); m != nil {
		a.rcode = string(m[1])
	}
	if m := clientSubnet.FindSubmatch(out); m != nil {
		a.subnet = string(m[1])
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 5 && !strings.HasPrefix(f[0], ";") && (f[3] == "A" || f[3] == "AAAA") {
			a.addrs = append(a.addrs, f[4])
		}
	}
	return a
}

// TestSteeringGeo: Services with locations at one name; clients located
// by their ECS option (IPv4 and IPv6, from dig and kdig) or, without one,
// by their source address (127.0.0.1 and ::1), through the geoip plugin.
// Regions are written as users write them: ISO 3166-2 codes (DE-HE, GB-CAM,
// matched against GeoLite2's HE and ENG+CAM) and a custom code (us-east-1).
// The reply's ECS scope is the query's source prefix.
func TestSteeringGeo(t *testing.T) {
	mmdb := testMMDB(t)
	s := startServer(t, "test/e2e/testdata/Corefile.steering", kubeconfig, "K8S_GATEWAY_MMDB="+mmdb)
	ns := namespace(t)
	geo := "geo." + ns + ".example.com."
	for _, svc := range []struct{ name, ip, loc string }{
		{"de", "192.0.2.81", "continent=EU,country=DE,region=DE-HE"},
		{"by", "192.0.2.85", "continent=EU,country=DE,region=DE-BY"},
		{"fr", "192.0.2.82", "continent=EU,country=FR"},
		{"us", "192.0.2.83", "continent=NA,country=US"},
		{"jp", "192.0.2.84", "continent=AS,country=JP"},
		{"cam", "192.0.2.86", "region=GB-CAM"},
		{"gb", "192.0.2.87", "country=GB"},
		{"use1", "192.0.2.88", "region=us-east-1"},
	} {
		steeredService(t, kubeconfig, ns, svc.name, geo, svc.ip, "k8s-gateway.dns/location", svc.loc)
	}
	// Every target published: the DE client gets the DE target.
	deadline := time.Now().Add(10 * time.Second)
	for {
		a := s.askWith(t, "dig", "127.0.0.1", geo, "A", "+subnet=198.51.100.0/24")
		if len(a.addrs) == 1 && a.addrs[0] == "192.0.2.81" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the DE client never got the DE target: %+v", a)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The region, every time (DE-BY is of the same country: drawn half of
	// the time if the region were not matched).
	for i := range 20 {
		if a := s.askWith(t, "dig", "127.0.0.1", geo, "A", "+subnet=198.51.100.0/24"); len(a.addrs) != 1 || a.addrs[0] != "192.0.2.81" {
			t.Fatalf("query %d of the DE-HE client (GeoLite2's HE): got %+v, want the DE-HE target only", i, a)
		}
	}
	for _, c := range []struct {
		desc, tool, server, subnet string
		want, scope                string
	}{
		{"ECS in DE-HE: the region", "dig", "127.0.0.1", "198.51.100.0/24", "192.0.2.81", "198.51.100.0/24/24"},
		{"IPv6 ECS in GB-CAM, the second subdivision: the region", "kdig", "::1", "2001:db8:b::/48", "192.0.2.86", "2001:db8:b::/48/48"},
		{"ECS in a custom region: the region", "dig", "127.0.0.1", "198.18.0.0/24", "192.0.2.88", "198.18.0.0/24/24"},
		{"ECS in the US: the country", "kdig", "127.0.0.1", "203.0.113.0/24", "192.0.2.83", "203.0.113.0/24/24"},
		{"ECS in AU: no match, the default (AS)", "dig", "127.0.0.1", "192.0.2.0/24", "192.0.2.84", "192.0.2.0/24/24"},
		{"IPv6 ECS in FR: the country", "kdig", "127.0.0.1", "2001:db8:e::/48", "192.0.2.82", "2001:db8:e::/48/48"},
		{"IPv6 ECS in CA: the continent (NA)", "dig", "::1", "2001:db8:a::/56", "192.0.2.83", "2001:db8:a::/56/56"},
		{"source 127.0.0.1 (US), no ECS", "dig", "127.0.0.1", "", "192.0.2.83", ""},
		{"IPv6 source ::1 (FR), no ECS", "kdig", "::1", "", "192.0.2.82", ""},
		{"ECS 0.0.0.0/0: the client opted out, the default, scope 0", "dig", "127.0.0.1", "0.0.0.0/0", "192.0.2.84", "0.0.0.0/0/0"},
	} {
		var opts []string
		if c.subnet != "" {
			opts = append(opts, "+subnet="+c.subnet)
		}
		a := s.askWith(t, c.tool, c.server, geo, "A", opts...)
		if a.rcode != "NOERROR" || len(a.addrs) != 1 || a.addrs[0] != c.want || a.subnet != c.scope {
			t.Errorf("%s (%s): got %+v, want %s with ECS %q", c.desc, c.tool, a, c.want, c.scope)
		}
	}
	// A name that is not steered answers alike for all: scope 0.
	plain := "de." + ns + ".example.com."
	if a := s.askWith(t, "dig", "127.0.0.1", plain, "A", "+subnet=198.51.100.0/24"); a.subnet != "198.51.100.0/24/0" || len(a.addrs) != 1 {
		t.Errorf("plain name: %+v, want scope 0", a)
	}
	// AAAA: no target has an IPv6 address, so NODATA, as without steering.
	if a := s.askWith(t, "dig", "127.0.0.1", geo, "AAAA", "+subnet=198.51.100.0/24"); a.rcode != "NOERROR" || len(a.addrs) != 0 {
		t.Errorf("AAAA: %+v", a)
	}
}

// share is the observed share of one answer and the tolerance it is held to.
func withinShare(t *testing.T, counts map[string]int, n int, addr string, weight, total float64) {
	t.Helper()
	p := weight / total
	tol := 5 * math.Sqrt(p*(1-p)/float64(n)) // five standard deviations of a binomial share
	got := float64(counts[addr]) / float64(n)
	t.Logf("%s: weight %.0f/%.0f, share %.4f (want %.4f ± %.4f)", addr, weight, total, got, p, tol)
	if math.Abs(got-p) > tol {
		t.Errorf("%s: share %.4f of %d answers, want %.4f ± %.4f", addr, got, n, p, tol)
	}
}

// countAnswers asks name A n times over UDP with the Go client, with an ECS
// option of subnet when not empty, and counts the single addresses answered.
func (s *server) countAnswers(t *testing.T, name, subnet string, n int) map[string]int {
	t.Helper()
	c := &dns.Client{Timeout: 2 * time.Second}
	conn, err := c.Dial(fmt.Sprintf("127.0.0.1:%d", s.port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	counts := map[string]int{}
	for i := range n {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		if subnet != "" {
			ip, ipnet, _ := net.ParseCIDR(subnet)
			bits, _ := ipnet.Mask.Size()
			m.SetEdns0(1232, false)
			m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: uint8(bits), Address: ip.To4()})
		}
		in, _, err := c.ExchangeWithConn(m, conn)
		if err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		if in.Rcode != dns.RcodeSuccess || len(in.Answer) != 1 {
			t.Fatalf("query %d: rcode %s, %d answers, want one", i, dns.RcodeToString[in.Rcode], len(in.Answer))
		}
		counts[in.Answer[0].(*dns.A).A.String()]++
	}
	return counts
}

// TestSteeringWeights: three Services of weights 1, 2 and 7 at one name;
// over 10,000 queries each one's share of the answers is its weight's,
// within five standard deviations. dig sees one address per answer.
func TestSteeringWeights(t *testing.T) {
	mmdb := testMMDB(t)
	s := startServer(t, "test/e2e/testdata/Corefile.steering", kubeconfig, "K8S_GATEWAY_MMDB="+mmdb)
	ns := namespace(t)
	name := "weighted." + ns + ".example.com."
	weights := map[string]float64{"192.0.2.91": 1, "192.0.2.92": 2, "192.0.2.93": 7}
	for i, ip := range []string{"192.0.2.91", "192.0.2.92", "192.0.2.93"} {
		steeredService(t, kubeconfig, ns, fmt.Sprintf("w%d", i), name, ip, "k8s-gateway.dns/weight", strconv.Itoa(int(weights[ip])))
	}
	// Wait until all three are published: each answers, sooner or later.
	deadline := time.Now().Add(15 * time.Second)
	for {
		if c := s.countAnswers(t, name, "", 200); len(c) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the three Services never all answered")
		}
		time.Sleep(200 * time.Millisecond)
	}
	const n = 10000
	start := time.Now()
	counts := s.countAnswers(t, name, "", n)
	t.Logf("%d queries in %s", n, time.Since(start).Round(time.Millisecond))
	for ip, w := range weights {
		withinShare(t, counts, n, ip, w, 10)
	}
	if a := s.askWith(t, "dig", "127.0.0.1", name, "A", "+subnet=198.51.100.0/24"); len(a.addrs) != 1 || a.subnet != "198.51.100.0/24/0" {
		t.Errorf("dig: %+v, want one address and ECS scope 0 (no location involved)", a)
	}
}
