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

	"github.com/miekg/dns"
)

// The DNSSEC test runs k8s_gateway behind CoreDNS's dnssec plugin
// (test/e2e/testdata/Corefile.dnssec), with a key made by dnssec-keygen, and resolves
// through unbound, a validating resolver that trusts the key's DS
// (testdata/unbound.conf).

// dnssecKey makes an ECDSA P-256 key for example.com with the SEP flag (a CSK)
// in dir and returns its base name and its DS record.
func dnssecKey(t *testing.T, dir string) (key, ds string) {
	t.Helper()
	out, err := exec.Command(sbin(t, "dnssec-keygen"), "-q", "-K", dir, "-a", "ECDSAP256SHA256", "-f", "KSK", "-n", "ZONE", "example.com").CombinedOutput()
	if err != nil {
		t.Fatalf("dnssec-keygen: %v\n%s", err, out)
	}
	key = filepath.Join(dir, strings.TrimSpace(string(out)))
	out, err = exec.Command(sbin(t, "dnssec-dsfromkey"), "-2", key+".key").CombinedOutput()
	if err != nil {
		t.Fatalf("dnssec-dsfromkey: %v\n%s", err, out)
	}
	return key, strings.TrimSpace(string(out))
}

// startUnbound runs a validating unbound with example.com as a stub zone at
// primaryPort, trusting anchor.
func startUnbound(t *testing.T, name string, primaryPort int, anchor string) *daemon {
	t.Helper()
	return startUnboundFrom(t, name, primaryPort, anchor, "")
}

// startUnboundFrom is startUnbound querying from the address source (a view's
// client), or from the default address when source is empty.
func startUnboundFrom(t *testing.T, name string, primaryPort int, anchor, source string) *daemon {
	t.Helper()
	dir, port := t.TempDir(), freePort(t)
	conf := filepath.Join(dir, "unbound.conf")
	text := renderConfig(t, "test/e2e/testdata/unbound.conf", map[string]string{
		"DIR": dir, "PORT": strconv.Itoa(port), "PRIMARY_PORT": strconv.Itoa(primaryPort), "TRUST_ANCHOR": anchor,
	})
	if source != "" {
		text = strings.Replace(text, "\nserver:\n", "\nserver:\n    outgoing-interface: "+source+"\n", 1)
	}
	return runUnbound(t, name, dir, port, conf, text, "example.com.", "SOA")
}

// runUnbound writes the configuration text to conf, checks it with
// unbound-checkconf, starts unbound in dir and returns once it answers
// qname qtype (checking disabled, so that validation does not matter).
func runUnbound(t *testing.T, name, dir string, port int, conf, text, qname, qtype string) *daemon {
	t.Helper()
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(sbin(t, "unbound-checkconf"), conf).CombinedOutput(); err != nil {
		t.Fatalf("unbound-checkconf: %v\n%s", err, out)
	}
	d := startDaemon(t, name, dir, port, sbin(t, "unbound"), "-d", "-c", conf)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if r, err := resolve(port, qname, qtype, "+cd"); err == nil && r.Rcode != "" {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not answer:\n%s", name, d.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// resolution is a dig answer with its header flags.
type resolution struct {
	Rcode             string
	Flags             []string
	Answer, Authority []string
}

func (r resolution) AD() bool { return slices.Contains(r.Flags, "ad") }

// rrTypes returns the record types of a section.
func rrTypes(rrs []string) []string {
	var out []string
	for _, rr := range rrs {
		out = append(out, fieldN(rr, 3))
	}
	return out
}

func (r resolution) String() string {
	return fmt.Sprintf("%s %v\n  answer: %q\n  authority: %q", r.Rcode, r.Flags, r.Answer, r.Authority)
}

// resolve asks the server on 127.0.0.1:port with dig, DO bit set.
func resolve(port int, name, qtype string, opts ...string) (resolution, error) {
	return resolveAt("127.0.0.1", port, name, qtype, opts...)
}

// resolveAt is resolve with the server on addr:port.
func resolveAt(addr string, port int, name, qtype string, opts ...string) (resolution, error) {
	args := append([]string{"@" + addr, "-p", strconv.Itoa(port), "+tries=1", "+time=5", "+dnssec", "+nomultiline", name, qtype}, opts...)
	out, err := exec.Command(digBin, args...).CombinedOutput()
	if err != nil {
		return resolution{}, fmt.Errorf("dig %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var r resolution
	section := ""
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.Contains(line, "->>HEADER<<-"):
			if i := strings.Index(line, "status: "); i >= 0 {
				r.Rcode = strings.TrimSuffix(strings.Fields(line[i+8:])[0], ",")
			}
		case strings.HasPrefix(line, ";; flags:"):
			r.Flags = strings.Fields(strings.SplitN(strings.TrimPrefix(line, ";; flags:"), ";", 2)[0])
		case strings.HasPrefix(line, ";; ANSWER SECTION"):
			section = "answer"
		case strings.HasPrefix(line, ";; AUTHORITY SECTION"):
			section = "authority"
		case strings.TrimSpace(line) == "":
			section = ""
		case strings.HasPrefix(line, ";"):
		default:
			rr := strings.Join(strings.Fields(line), " ")
			switch section {
			case "answer":
				r.Answer = append(r.Answer, rr)
			case "authority":
				r.Authority = append(r.Authority, rr)
			}
		}
	}
	if r.Rcode == "" {
		return r, fmt.Errorf("dig printed no status:\n%s", out)
	}
	return r, nil
}

// TestDNSSECValidation: answers of k8s_gateway signed on the fly by the
// dnssec plugin validate in unbound: positive answers (also synthesized from
// a wildcard and through an in-zone CNAME), NODATA, NXDOMAIN (as NSEC "black
// lies": a signed NODATA), the apex; with a wrong trust anchor everything is
// SERVFAIL.
func TestDNSSECValidation(t *testing.T) {
	key, ds := dnssecKey(t, t.TempDir())
	s := startServer(t, "test/e2e/testdata/Corefile.dnssec", kubeconfig, "K8S_GATEWAY_DNSSEC_KEY="+key)
	ns := namespace(t)
	kubectl(t, fmt.Sprintf(webServiceYAML+`---
apiVersion: v1
kind: Service
metadata:
  name: alias
  namespace: %[1]s
  annotations: {external-dns.alpha.kubernetes.io/target: web.%[1]s.example.com}
spec:
  type: LoadBalancer
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata:
  name: dangling
  namespace: %[1]s
  annotations: {external-dns.alpha.kubernetes.io/target: gone.%[1]s.example.com}
spec:
  type: LoadBalancer
  ports: [{port: 80}]
`, ns), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "web", "192.0.2.30", "2001:db8::30")
	web := "web." + ns + ".example.com."
	s.eventually(t, 5*time.Second, web, dns.TypeA, positive(web+" 30 IN A 192.0.2.30"))
	alias := "alias." + ns + ".example.com."
	s.eventually(t, 5*time.Second, alias, dns.TypeCNAME, positive(alias+" 30 IN CNAME "+web))

	// The plugin itself: signed with DO, NXDOMAIN turned into a NODATA with
	// an NSEC black lie; without DO, plain answers.
	nope := "nope." + ns + ".example.com."
	r, err := resolve(s.port, nope, "A", "+norecurse")
	if err != nil {
		t.Fatal(err)
	}
	wantNSEC := " IN NSEC \\000." + nope
	if r.Rcode != "NOERROR" || !slices.Contains(r.Flags, "aa") || len(r.Answer) != 0 ||
		!slices.ContainsFunc(r.Authority, func(rr string) bool { return strings.HasPrefix(rr, nope) && strings.Contains(rr, wantNSEC) }) {
		t.Errorf("plugin, %s A with DO: %s\nwant NOERROR with %s%s...", nope, r, nope, wantNSEC)
	}
	if r, err := s.ask(nope, dns.TypeA); err != nil || nxdomain.check(r) != nil {
		t.Errorf("plugin, %s A without DO: %s %v, want NXDOMAIN", nope, r, err)
	}
	if r, err := resolve(s.port, "example.com.", "DNSKEY", "+norecurse"); err != nil || !slices.Equal(rrTypes(r.Answer), []string{"DNSKEY", "RRSIG"}) {
		t.Errorf("plugin, DNSKEY: %s %v", r, err)
	}

	// A CNAME whose target lacks the type, or does not exist: the signed
	// CNAME, the signed SOA, and no NSEC for the target (online signing
	// proves the absence of the name asked only).
	dangling := "dangling." + ns + ".example.com."
	for _, q := range []struct{ name, qtype, rcode string }{{alias, "TXT", "NOERROR"}, {dangling, "A", "NXDOMAIN"}} {
		r, err := resolve(s.port, q.name, q.qtype, "+norecurse")
		if err != nil {
			t.Fatal(err)
		}
		if got := rrTypes(r.Answer); r.Rcode != q.rcode || !slices.Equal(got, []string{"CNAME", "RRSIG"}) || slices.Contains(rrTypes(r.Authority), "NSEC") {
			t.Errorf("plugin, %s %s with DO: %s\nwant %s, the signed CNAME and no NSEC", q.name, q.qtype, r, q.rcode)
		}
	}

	u := startUnbound(t, "unbound", s.port, ds)
	for _, c := range []struct {
		name, qtype string
		rcode       string
		answer      []string // types in the answer, RRSIGs included
	}{
		{"example.com.", "SOA", "NOERROR", []string{"RRSIG", "SOA"}},
		{"example.com.", "NS", "NOERROR", []string{"NS", "RRSIG"}},
		{"example.com.", "DNSKEY", "NOERROR", []string{"DNSKEY", "RRSIG"}},
		{web, "A", "NOERROR", []string{"A", "RRSIG"}},
		{web, "AAAA", "NOERROR", []string{"AAAA", "RRSIG"}},
		{"www." + ns + ".example.com.", "A", "NOERROR", []string{"A", "RRSIG"}},
		{"_https._tcp." + web, "SRV", "NOERROR", []string{"RRSIG", "SRV"}},
		// Synthesized from *.apps: signed as the name asked, needs no wildcard proof.
		{"a.b.apps." + ns + ".example.com.", "A", "NOERROR", []string{"A", "RRSIG"}},
		// A CNAME inside the zone and its target.
		{alias, "A", "NOERROR", []string{"A", "CNAME", "RRSIG", "RRSIG"}},
		// NODATA: a name without the type, an empty non-terminal, a wildcard.
		{web, "TXT", "NOERROR", nil},
		{ns + ".example.com.", "A", "NOERROR", nil},
		{"x.apps." + ns + ".example.com.", "TXT", "NOERROR", nil},
		{"example.com.", "TXT", "NOERROR", nil},
		// NXDOMAIN: a black lie, so NOERROR without data, validated.
		{nope, "A", "NOERROR", nil},
		{"deeper." + nope, "AAAA", "NOERROR", nil},
		// A CNAME whose target has no TXT, or does not exist. The plugin's
		// answer carries the signed CNAME but no proof for the target;
		// unbound asks for the target itself and gets it.
		{alias, "TXT", "NOERROR", []string{"CNAME", "RRSIG"}},
		{dangling, "A", "NOERROR", []string{"CNAME", "RRSIG"}},
	} {
		r, err := resolve(u.port, c.name, c.qtype)
		if err != nil {
			t.Fatal(err)
		}
		got := rrTypes(r.Answer)
		slices.Sort(got)
		if r.Rcode != c.rcode || !r.AD() || !slices.Equal(got, c.answer) {
			t.Errorf("unbound, %s %s: %s\nwant %s with ad, answer types %q", c.name, c.qtype, r, c.rcode, c.answer)
		}
	}

	// A trust anchor that does not match the key: nothing validates.
	f := strings.Fields(ds)
	digest := []byte(strings.ToUpper(f[len(f)-1]))
	const hex = "0123456789ABCDEF"
	digest[0] = hex[(strings.IndexByte(hex, digest[0])+1)%len(hex)]
	f[len(f)-1] = string(digest)
	bad := startUnbound(t, "unbound-wrong-anchor", s.port, strings.Join(f, " "))
	for _, q := range []struct{ name, qtype string }{{web, "A"}, {nope, "A"}, {web, "TXT"}, {"example.com.", "DNSKEY"}} {
		r, err := resolve(bad.port, q.name, q.qtype)
		if err != nil {
			t.Fatal(err)
		}
		if r.Rcode != "SERVFAIL" || r.AD() || len(r.Answer) != 0 {
			t.Errorf("wrong trust anchor, %s %s: %s, want SERVFAIL", q.name, q.qtype, r)
		}
	}
	// With checking disabled (CD) the data comes through, unvalidated.
	if r, err := resolve(bad.port, web, "A", "+cd"); err != nil || r.Rcode != "NOERROR" || r.AD() || !slices.Contains(rrTypes(r.Answer), "A") {
		t.Errorf("wrong trust anchor, %s A with CD: %s %v", web, r, err)
	}
	if !strings.Contains(bad.output(), "validation failure") {
		t.Errorf("unbound logged no validation failure:\n%s", bad.output())
	}
}
