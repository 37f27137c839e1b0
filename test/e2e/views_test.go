//go:build e2e

package e2e

import (
	"fmt"
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
)

// The split-horizon recipe of the README (test/e2e/testdata/Corefile.views): two views
// of example.com on one port, the internal one for clients of 127.0.0.2, the
// external one for everyone else (127.0.0.1 here).

const internalClient, externalClient = "127.0.0.2", "127.0.0.1"

// queryFrom asks s from the source address src with the Go client and with
// dig, and returns the answer when they agree.
func (s *server) queryFrom(src, name string, qtype uint16) (reply, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	c := &dns.Client{Timeout: 2 * time.Second, Dialer: &net.Dialer{LocalAddr: &net.UDPAddr{IP: net.ParseIP(src)}}}
	in, _, err := c.Exchange(m, fmt.Sprintf("127.0.0.1:%d", s.port))
	if err != nil {
		return reply{}, err
	}
	r := reply{Rcode: dns.RcodeToString[in.Rcode], AA: in.Authoritative}
	r.Answer, r.Authority, r.Additional = rrStrings(in.Answer), rrStrings(in.Ns), rrStrings(in.Extra)
	viaDig, err := s.dig(name, dns.TypeToString[qtype], "-b", src)
	if err != nil {
		return reply{}, err
	}
	if viaDig.String() != r.String() {
		return reply{}, fmt.Errorf("dig and the Go client disagree:\ngo:  %s\ndig: %s", r, viaDig)
	}
	return r, nil
}

// eventuallyFrom polls from src until name/qtype answers as expected.
func (s *server) eventuallyFrom(t *testing.T, src string, timeout time.Duration, name string, qtype uint16, want expectation) {
	t.Helper()
	start := time.Now()
	var last error
	for time.Since(start) < timeout {
		r, err := s.queryFrom(src, name, qtype)
		if err == nil {
			if last = want.check(r); last == nil {
				return
			}
		} else {
			last = err
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("from %s, %s %s: not as expected after %s: %v", src, name, dns.TypeToString[qtype], timeout, last)
}

// viewAddrs are the addresses one view must answer.
type viewAddrs struct {
	client           string
	web, web6, dual  string
	glue             string
	otherWeb, other6 string // the other view's, never in this one's zone transfer
}

// TestSplitHorizonViews runs the README's recipe: the same route on an
// internal and an external Gateway, and a route on a Gateway that reports
// both kinds of addresses; each view answers, transfers and signs only its
// own addresses, and follows changes on its own.
func TestSplitHorizonViews(t *testing.T) {
	installGatewayAPI(t, false)
	key, ds := dnssecKey(t, t.TempDir())
	s := startServer(t, "test/e2e/testdata/Corefile.views", kubeconfig,
		"K8S_GATEWAY_DNSSEC_KEY="+key,
		"K8S_GATEWAY_INTERNAL_CLIENTS="+internalClient+"/32",
		// No secondary listens there: the NOTIFYs go nowhere.
		fmt.Sprintf("K8S_GATEWAY_INTERNAL_SECONDARY=%s:%d", internalClient, freePort(t)),
		fmt.Sprintf("K8S_GATEWAY_EXTERNAL_SECONDARY=%s:%d", externalClient, freePort(t)))
	nameserverService(t, "10.53.0.1", "198.51.100.53")
	ns := splitHorizonObjects(t)
	web, dual := "web."+ns+".example.com.", "dual."+ns+".example.com."

	glue := "dns1.kube-system.example.com."
	views := []viewAddrs{
		{client: internalClient, web: "10.20.0.1", web6: "fd00::1", dual: "192.168.7.7", glue: "10.53.0.1", otherWeb: "203.0.113.1", other6: "2001:db8::1"},
		{client: externalClient, web: "203.0.113.1", web6: "2001:db8::1", dual: "198.51.100.7", glue: "198.51.100.53", otherWeb: "10.20.0.1", other6: "fd00::1"},
	}
	start := time.Now()
	for _, v := range views {
		s.eventuallyFrom(t, v.client, 5*time.Second, web, dns.TypeA, gwapiA(web, v.web))
		s.eventuallyFrom(t, v.client, time.Second, web, dns.TypeAAAA, positive(web+" 30 IN AAAA "+v.web6))
		s.eventuallyFrom(t, v.client, time.Second, dual, dns.TypeA, gwapiA(dual, v.dual))
		s.eventuallyFrom(t, v.client, 5*time.Second, glue, dns.TypeA, gwapiA(glue, v.glue))
	}
	t.Logf("both views answer their own addresses: %s", time.Since(start).Round(time.Millisecond))
	time.Sleep(1100 * time.Millisecond) // the serial of the last change is published
	for _, v := range views {
		checkViewAXFR(t, s, v, web, dual)
	}
	// A client that is neither the internal one nor in the external view's
	// `to` is refused a transfer.
	if out := digAXFR(t, s, "127.0.0.3"); !strings.Contains(out, "Transfer failed") {
		t.Errorf("AXFR from 127.0.0.3:\n%s", out)
	}

	// DNSSEC per view: one key, one DS in the parent; a validating resolver
	// of each view (the internal one queries from the internal address).
	for _, v := range views {
		u := startUnboundFrom(t, "unbound-"+v.client, s.port, ds, v.client)
		for _, q := range []struct{ name, qtype, rr string }{{web, "A", v.web}, {web, "AAAA", v.web6}, {dual, "A", v.dual}} {
			r, err := resolve(u.port, q.name, q.qtype)
			if err != nil {
				t.Fatal(err)
			}
			want := q.name + " 30 IN " + q.qtype + " " + q.rr
			if r.Rcode != "NOERROR" || !r.AD() || !slices.Contains(r.Answer, want) || len(r.Answer) != 2 {
				t.Errorf("view of %s, validated %s %s: %s\nwant %q and its RRSIG, with ad", v.client, q.name, q.qtype, r, want)
			}
		}
	}

	// A change of the internal Gateway reaches the internal view only.
	start = time.Now()
	setGatewayAddresses(t, ns, "internal", "10.20.0.2", "fd00::1")
	s.eventuallyFrom(t, internalClient, 5*time.Second, web, dns.TypeA, gwapiA(web, "10.20.0.2"))
	t.Logf("internal Gateway changed → internal view answers: %s", time.Since(start).Round(time.Millisecond))
	s.eventuallyFrom(t, externalClient, time.Second, web, dns.TypeA, gwapiA(web, "203.0.113.1"))
	// The external Gateway gone: the external view has no address left for
	// the name; the internal one is unchanged.
	kubectl(t, "", "-n", ns, "delete", "gateways.gateway.networking.k8s.io", "external")
	s.eventuallyFrom(t, externalClient, 5*time.Second, web, dns.TypeA, nxdomain)
	s.eventuallyFrom(t, internalClient, time.Second, web, dns.TypeA, gwapiA(web, "10.20.0.2"))
}

// digAXFR asks for a transfer of example.com from src and returns dig's output.
func digAXFR(t *testing.T, s *server, src string) string {
	t.Helper()
	out, _ := execDig("-b", src, "@127.0.0.1", "-p", strconv.Itoa(s.port), "+tries=1", "+time=5", "example.com.", "AXFR")
	return out
}

// checkViewAXFR: the transfer from a view's client holds that view's
// addresses and glue, and none of the other view's.
func checkViewAXFR(t *testing.T, s *server, v viewAddrs, web, dual string) {
	t.Helper()
	wants := []string{
		web + " 30 IN A " + v.web, web + " 30 IN AAAA " + v.web6, dual + " 30 IN A " + v.dual,
		"dns1.kube-system.example.com. 30 IN A " + v.glue,
	}
	axfr := transferHolding(t, wants, "-b", v.client, "@127.0.0.1", "-p", strconv.Itoa(s.port), "example.com.", "AXFR")
	if len(axfr) < 3 || !strings.Contains(axfr[0], " SOA ") || axfr[0] != axfr[len(axfr)-1] {
		t.Fatalf("AXFR from %s not framed by the SOA:\n%s", v.client, strings.Join(axfr, "\n"))
	}
	for _, want := range wants {
		if !slices.Contains(axfr, want) {
			t.Errorf("AXFR from %s lacks %q", v.client, want)
		}
	}
	for _, rr := range axfr {
		if strings.HasSuffix(rr, " "+v.otherWeb) || strings.HasSuffix(rr, " "+v.other6) {
			t.Errorf("AXFR from %s holds the other view's %q", v.client, rr)
		}
	}
	// The transfer passes named-checkzone like any other.
	zonefile := filepath.Join(t.TempDir(), "example.com.zone")
	if err := os.WriteFile(zonefile, []byte(strings.Join(axfr[:len(axfr)-1], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := execCommand(sbin(t, "named-checkzone"), "-i", "local", "example.com", zonefile); err != nil || !strings.Contains(out, "OK") {
		t.Errorf("named-checkzone of the AXFR from %s: %v\n%s", v.client, err, out)
	}
}

func execCommand(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

func execDig(args ...string) (string, error) { return execCommand(digBin, args...) }

// digRRs returns the records of dig's output, whitespace folded.
func digRRs(out string) []string {
	var rrs []string
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, ";") {
			rrs = append(rrs, strings.Join(strings.Fields(line), " "))
		}
	}
	return rrs
}

// splitHorizonObjects creates the objects of TestSplitHorizonViews in a new
// namespace, which it returns: the Gateways internal (10.20.0.1, fd00::1),
// external (203.0.113.1, 2001:db8::1) and dual (192.168.7.7 and
// 198.51.100.7), the route web on internal and external, the route dual on
// dual, each accepted.
func splitHorizonObjects(t *testing.T) string {
	t.Helper()
	ns := namespace(t)
	gatewayClass(t, ns)
	all := "allowedRoutes: {namespaces: {from: All}}"
	kubectl(t, manifests(
		gateway{namespace: ns, name: "internal", class: ns, listeners: []listener{{"http", "HTTP", 80, "", all}}},
		gateway{namespace: ns, name: "external", class: ns, listeners: []listener{{"http", "HTTP", 80, "", all}}},
		gateway{namespace: ns, name: "dual", class: ns, listeners: []listener{{"http", "HTTP", 80, "", all}}},
		route{kind: "HTTPRoute", namespace: ns, name: "web", parent: gwapiParent{gateway: "internal"},
			hostnames: []string{"web." + ns + ".example.com"}, backend: "web", port: 80},
		route{kind: "HTTPRoute", namespace: ns, name: "dual", parent: gwapiParent{gateway: "dual"},
			hostnames: []string{"dual." + ns + ".example.com"}, backend: "web", port: 80},
	), "apply", "-f", "-")
	// The web route on both Gateways.
	kubectl(t, "", "-n", ns, "patch", "httproutes.gateway.networking.k8s.io", "web", "--type=merge", "-p",
		`{"spec":{"parentRefs":[{"name":"internal"},{"name":"external"}]}}`)
	setGatewayAddresses(t, ns, "internal", "10.20.0.1", "fd00::1")
	setGatewayAddresses(t, ns, "external", "203.0.113.1", "2001:db8::1")
	setGatewayAddresses(t, ns, "dual", "192.168.7.7", "198.51.100.7")
	setRouteStatus(t, ns, "httproutes", "web", gwapiParent{gateway: "internal", accepted: "True"}, gwapiParent{gateway: "external", accepted: "True"})
	setRouteStatus(t, ns, "httproutes", "dual", gwapiParent{gateway: "dual", accepted: "True"})
	return ns
}
