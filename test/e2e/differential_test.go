//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The differential test compares the plugin, query by query, with Knot DNS
// serving the plugin's own zone as its secondary (differential_compare_test.go
// compares two replies; differential_rules_test.go and
// differential_request_rules_test.go hold the differences forgiven, each with
// its reason; differential_odd_test.go the requests outside the matrix;
// differential_random_test.go a randomized campaign). BIND, a second
// secondary, gives its opinion on the differences left.

// diffZone is the zone of the comparison.
const diffZone = "differential.test."

// diffCorefile serves diffZone from the objects of one namespace (%[1]s),
// with zone transfers for Knot. The apex is the nameserver Service ns1 of
// that namespace (its addresses are the glue); the secondary is out of the
// zone, so it has none.
const diffCorefile = `differential.test:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    errors
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    transfer {
        to *
    }
    k8s_gateway differential.test {
        kubeconfig {$KUBECONFIG}
        namespaces %[1]s
        apex ns1.%[1]s
        secondary ns.example.net.
        ttl 30
    }
}
`

// diffKnotConf runs knotd as a secondary of the plugin for the zones of
// diffKnotZone that follow it, allowing 127.0.0.1 to transfer them from it
// (to compare the AXFRs) but to send no NOTIFY (the zones are complete before
// Knot starts).
const diffKnotConf = `server:
    rundir: "%[1]s"
    listen: 127.0.0.1@%[2]d
log:
  - target: stderr
    any: info
database:
    storage: "%[1]s"
remote:
  - id: plugin
    address: 127.0.0.1@%[3]d
acl:
  - id: transfer_to_test
    address: 127.0.0.1
    action: transfer
template:
  - id: default
    storage: "%[1]s"
    file: "%%s.zone"
zone:
`

// diffKnotZone is a zone of diffKnotConf.
const diffKnotZone = `  - domain: %s
    master: plugin
    acl: transfer_to_test
`

// diffObjects are the objects of the comparison, in namespace %[1]s, zone
// %[2]s (without the final dot). Every shape of the README's table: an Ingress
// with several hosts and a TLS host (and a TTL annotation), LoadBalancer
// Services with IPv4 and IPv6 and named ports (SRV), an ExternalName Service
// (a CNAME leaving the zone), hostname annotations (relative, absolute, a
// wildcard, a name with empty non-terminals above it). diffEndpoint adds the
// rest.
const diffObjects = `
apiVersion: v1
kind: Service
metadata: {name: ns1, namespace: %[1]s}
spec:
  type: LoadBalancer
  ports: [{name: dns, port: 53, protocol: UDP}]
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: %[1]s
  annotations: {coredns.io/hostname: "www, *.wild.%[2]s., a.b.ent.%[2]s."}
spec:
  type: LoadBalancer
  ports: [{name: https, port: 443, protocol: TCP}, {name: dns, port: 53, protocol: UDP}]
---
apiVersion: v1
kind: Service
metadata:
  name: alias
  namespace: %[1]s
  annotations: {external-dns.alpha.kubernetes.io/hostname: out.%[2]s}
spec: {type: ExternalName, externalName: lb-1234.elb.example.net}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  namespace: %[1]s
  annotations:
    external-dns.kubernetes.io/ttl: "120"
    external-dns.kubernetes.io/hostname: exists.wild.%[2]s
spec:
  tls: [{hosts: [secure.%[2]s]}]
  rules:
  - host: shop.%[2]s
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 443}}}}]}
  - host: www.shop.%[2]s
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 443}}}}]}
`

// diffEndpoint is the DNSEndpoint of the comparison (%[1]s namespace, %[2]s
// zone): CNAMEs (a chain inside the zone, to a missing name, into a
// delegation, to a wildcard, a wildcard CNAME, a loop), MX, TXT (with its own
// TTL), SRV, CAA, PTR, a record at the apex, a delegation with glue, and the
// endpoints of diffBulkEndpoints (%[3]s).
const diffEndpoint = `
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata: {name: records, namespace: %[1]s}
spec:
  endpoints:
  - {dnsName: chain1.%[2]s, recordType: CNAME, targets: [chain2.%[2]s]}
  - {dnsName: chain2.%[2]s, recordType: CNAME, targets: [www.%[2]s]}
  - {dnsName: dangling.%[2]s, recordType: CNAME, targets: [nothing.%[2]s]}
  - {dnsName: todeleg.%[2]s, recordType: CNAME, targets: [host.deleg.%[2]s]}
  - {dnsName: towild.%[2]s, recordType: CNAME, targets: [foo.wild.%[2]s]}
  - {dnsName: "*.cw.%[2]s", recordType: CNAME, targets: [chain1.%[2]s]}
  - {dnsName: loop1.%[2]s, recordType: CNAME, targets: [loop2.%[2]s]}
  - {dnsName: loop2.%[2]s, recordType: CNAME, targets: [loop1.%[2]s]}
  - {dnsName: mx.%[2]s, recordType: MX, targets: ["10 mailhost.%[2]s", "20 mail.example.net"]}
  - {dnsName: mailhost.%[2]s, recordType: A, targets: [192.0.2.30]}
  - {dnsName: mailhost.%[2]s, recordType: AAAA, targets: ["2001:db8::30"]}
  - {dnsName: txt.%[2]s, recordType: TXT, targets: ["v=spf1 -all", "hello world"], recordTTL: 300}
  - {dnsName: _sip._tcp.%[2]s, recordType: SRV, targets: ["10 5 5060 mailhost.%[2]s"]}
  - {dnsName: caa.%[2]s, recordType: CAA, targets: ["0 issue \"letsencrypt.org\""]}
  - {dnsName: ptr.%[2]s, recordType: PTR, targets: [www.%[2]s]}
  - {dnsName: %[2]s, recordType: TXT, targets: ["apex"]}
  - {dnsName: deleg.%[2]s, recordType: NS, targets: [ns.deleg.%[2]s, ns.example.net]}
  - {dnsName: ns.deleg.%[2]s, recordType: A, targets: [192.0.2.40]}
%[3]s`

// diffChainLinks is the length of the CNAME chain c1 → c2 → ... → A: longer
// than the plugin follows (8 links), and than Knot does.
const diffChainLinks = 10

// diffBulkEndpoints are the endpoints of the DNSEndpoint that come in
// numbers, for zone: a name with 40 A records (a reply too large for 512
// octets), an SRV RRset whose answer fits in 512 octets and whose additional
// addresses do not, a delegation to 12 nameservers below it with glue (a
// referral too large for 512 octets), and a CNAME chain of diffChainLinks
// links inside the zone.
func diffBulkEndpoints(zone string) string {
	var b strings.Builder
	ep := func(name, rrtype string, targets ...string) {
		fmt.Fprintf(&b, "  - {dnsName: %s.%s, recordType: %s, targets: [%s]}\n", name, zone, rrtype, strings.Join(targets, ", "))
	}
	var many, srv, ns []string
	for i := 1; i <= 40; i++ {
		many = append(many, fmt.Sprintf("198.51.100.%d", i))
	}
	ep("many", "A", many...)
	for i := 1; i <= 8; i++ {
		ep(fmt.Sprintf("t%d", i), "A", fmt.Sprintf("192.0.2.%d", 100+i))
		ep(fmt.Sprintf("t%d", i), "AAAA", fmt.Sprintf(`"2001:db8::%d"`, 100+i))
		srv = append(srv, fmt.Sprintf(`"0 0 80 t%d.%s"`, i, zone))
	}
	ep("_big._tcp", "SRV", srv...)
	for i := 1; i <= 12; i++ {
		ep(fmt.Sprintf("n%d.bigdeleg", i), "A", fmt.Sprintf("192.0.2.%d", 150+i))
		ep(fmt.Sprintf("n%d.bigdeleg", i), "AAAA", fmt.Sprintf(`"2001:db8::%d"`, 150+i))
		ns = append(ns, fmt.Sprintf("n%d.bigdeleg.%s", i, zone))
	}
	ep("bigdeleg", "NS", ns...)
	for i := 1; i <= diffChainLinks; i++ {
		ep(fmt.Sprintf("c%d", i), "CNAME", fmt.Sprintf("c%d.%s", i+1, zone))
	}
	ep(fmt.Sprintf("c%d", diffChainLinks+1), "A", "192.0.2.99")
	return b.String()
}

// diffNames are the query names of the matrix, relative to diffZone unless
// they end in a dot ("@" is the apex, "$ns" the namespace), a few in mixed
// case.
var diffNames = []string{
	"@", "ns1.$ns", "_dns._udp.ns1.$ns",
	"shop", "www.shop", "secure", "Shop",
	"web.$ns", "_https._tcp.web.$ns", "_dns._udp.web.$ns", "WWW", "www",
	"x.www", "nothing", "a.b.c.nothing",
	"*.wild", "foo.wild", "a.b.wild", "wild", "exists.wild", "x.exists.wild", "FOO.Wild",
	"ent", "b.ent", "a.b.ent", "x.b.ent",
	"alias.$ns", "out", "chain1", "ChAiN1", "chain2", "x.chain1", "dangling", "todeleg", "towild",
	"a.cw", "A.CW", "cw", "*.cw",
	"mx", "txt", "_sip._tcp", "caa", "ptr", "mailhost",
	"deleg", "DELEG", "ns.deleg", "a.b.deleg",
	"many", "_big._tcp", "bigdeleg", "x.bigdeleg", "n1.bigdeleg", "c1", "c4", "loop1", "loop2",
	// The zone's own labels in upper case: every name of a reply shares them.
	"CHAIN1.DIFFERENTIAL.TEST.", "Differential.Test.", "NOTHING.DIFFERENTIAL.TEST.", "A.B.DELEG.Differential.TEST.",
}

// diffTypes are the query types of the matrix (65534: a type no one has).
var diffTypes = []uint16{
	dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeMX, dns.TypeTXT, dns.TypeSRV, dns.TypeNS,
	dns.TypeSOA, dns.TypePTR, dns.TypeCAA, dns.TypeDS, dns.TypeDNSKEY, dns.TypeRRSIG, dns.TypeNSEC, dns.TypeANY, 65534,
}

// diffOutOfZone are names outside diffZone: both servers refuse them.
var diffOutOfZone = []string{"example.net.", "test."}

// diffName turns an entry of diffNames into a query name.
func diffName(rel, ns string) string {
	if rel == "@" {
		return diffZone
	}
	if strings.HasSuffix(rel, ".") {
		return rel
	}
	return strings.ReplaceAll(rel, "$ns", ns) + "." + diffZone
}

// TestDifferential: every answer the plugin gives is the one Knot gives for
// the same zone, over a matrix of names × types × ways of asking, apart from
// the named differences that the RFCs allow. The zone is the test's own, fed
// only by the objects of its own namespace (the namespaces option), so
// nothing another test does changes it; Knot gets it by AXFR from the plugin.
func TestDifferential(t *testing.T) {
	start := time.Now()
	chartEnsureCRDs(t, []string{"dnsendpoints.externaldns.k8s.io"}, false, filepath.Join(repoRoot, "test/e2e/testdata/dnsendpoint-crd.yaml"))
	installGatewayAPI(t, false)
	ns := namespace(t)
	zone := strings.TrimSuffix(diffZone, ".")
	s := startServer(t, tempCorefile(t, fmt.Sprintf(diffCorefile, ns)), kubeconfig)

	kubectl(t, fmt.Sprintf(diffObjects, ns, zone), "apply", "-f", "-")
	chartKubectlRetrying(t, fmt.Sprintf(diffEndpoint, ns, zone, diffBulkEndpoints(zone)), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "ns1", "192.0.2.53", "2001:db8::53")
	setLBStatus(t, ns, "service", "web", "192.0.2.20", "2001:db8::20")
	setLBStatus(t, ns, "ingress", "shop", "192.0.2.10", "2001:db8::10")

	// Everything is published: the last object of each kind answers.
	s.eventually(t, 10*time.Second, "ns1."+ns+"."+diffZone, dns.TypeAAAA, positive("ns1."+ns+"."+diffZone+" 30 IN AAAA 2001:db8::53"))
	s.eventually(t, 5*time.Second, "www."+diffZone, dns.TypeAAAA, positive("www."+diffZone+" 30 IN AAAA 2001:db8::20"))
	s.eventually(t, 5*time.Second, "secure."+diffZone, dns.TypeAAAA, positive("secure."+diffZone+" 120 IN AAAA 2001:db8::10"))
	s.eventually(t, 5*time.Second, "out."+diffZone, dns.TypeCNAME, positive("out."+diffZone+" 30 IN CNAME lb-1234.elb.example.net."))
	s.eventually(t, 5*time.Second, "ptr."+diffZone, dns.TypePTR, positive("ptr."+diffZone+" 30 IN PTR www."+diffZone))
	applyDiffMoreObjects(t, s, ns, zone)
	peers, axfr := startDiffSecondaries(t, s.port, diffZone)
	serial := axfr[0].(*dns.SOA).Serial
	knotPort := peers.knot
	knot := &daemon{name: "knot", server: &server{t: t, port: knotPort}}
	t.Logf("zone %s serial %d: %d records; knot and bind have it %s after the test started", diffZone, serial, len(axfr)-1, time.Since(start).Round(time.Millisecond))

	// The matrix.
	var queries []diffQuery
	for _, rel := range slices.Concat(diffNames, diffMoreNames) {
		for _, qtype := range diffTypes {
			for _, f := range diffFlagSets {
				queries = append(queries, diffQuery{name: diffName(rel, ns), qtype: qtype, flags: f})
			}
		}
	}
	for _, name := range diffOutOfZone {
		for _, f := range diffFlagSets {
			queries = append(queries, diffQuery{name: name, qtype: dns.TypeA, flags: f})
		}
	}
	compareStart := time.Now()
	var tally diffTally
	for _, q := range queries {
		c, err := peers.ask(q, false)
		if err != nil {
			t.Fatal(err)
		}
		tally.add(c)
	}
	t.Logf("%d queries to each server in %s (%d truncated by both); allowed differences: %v",
		len(queries), time.Since(compareStart).Round(time.Millisecond), tally.truncated, tally.forgiven)
	reportDiffs(t, "queries", len(queries), tally.diffs)

	checkOddRequests(t, s.port, knotPort)
	checkRandomQueries(t, peers, axfr)

	// A sample with real dig (and the Go client), as the other tests ask.
	// Not the name with 40 addresses: dig retries a truncated reply over
	// TCP, the helper's Go client does not.
	sameAnswers(t, s, []*daemon{knot}, []question{
		{diffZone, dns.TypeNS}, {"WWW." + diffZone, dns.TypeA}, {"foo.wild." + diffZone, dns.TypeAAAA},
		{"chain1." + diffZone, dns.TypeA}, {"x.b.ent." + diffZone, dns.TypeTXT}, {"b.ent." + diffZone, dns.TypeA},
		{"mx." + diffZone, dns.TypeMX}, {"a.b.deleg." + diffZone, dns.TypeA}, {"todeleg." + diffZone, dns.TypeA},
		{"_https._tcp.web." + ns + "." + diffZone, dns.TypeSRV},
	})

	if got := zoneSerialAt(s.port, diffZone); got != serial {
		t.Errorf("the plugin's serial moved from %d to %d during the comparison", serial, got)
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// zoneSerialAt returns the SOA serial of zone at 127.0.0.1:port, or 0.
func zoneSerialAt(port int, zone string) uint32 {
	r, err := exchange(port, diffQuery{name: zone, qtype: dns.TypeSOA, flags: diffFlagSets[0]}.msg(), false)
	if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
		return 0
	}
	if soa, ok := r.Answer[0].(*dns.SOA); ok {
		return soa.Serial
	}
	return 0
}

// stableSerial waits until the serial of zone has not moved for 1.5 s (a
// change in the second of an earlier one gets its serial on the next second)
// and returns it.
func stableSerial(t *testing.T, port int, zone string) uint32 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	serial, since := zoneSerialAt(port, zone), time.Now()
	for time.Since(since) < 1500*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("the serial of %s keeps moving (%d)", zone, serial)
		}
		time.Sleep(50 * time.Millisecond)
		if now := zoneSerialAt(port, zone); now != serial {
			serial, since = now, time.Now()
		}
	}
	if serial == 0 {
		t.Fatalf("no SOA for %s", zone)
	}
	return serial
}

// transferZone returns the AXFR of zone from 127.0.0.1:port, SOA to SOA.
func transferZone(t *testing.T, port int, zone string) []dns.RR {
	t.Helper()
	m := new(dns.Msg)
	m.SetAxfr(zone)
	ch, err := (&dns.Transfer{}).In(m, "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("AXFR %s from port %d: %v", zone, port, err)
	}
	var rrs []dns.RR
	for env := range ch {
		if env.Error != nil {
			t.Fatalf("AXFR %s from port %d: %v", zone, port, env.Error)
		}
		rrs = append(rrs, env.RR...)
	}
	if len(rrs) < 3 || rrs[0].Header().Rrtype != dns.TypeSOA || rrs[len(rrs)-1].Header().Rrtype != dns.TypeSOA {
		t.Fatalf("AXFR %s from port %d not framed by the SOA: %d records", zone, port, len(rrs))
	}
	return rrs
}

// sortedRRs is the canonical text of rrs, sorted.
func sortedRRs(rrs []dns.RR) []string { return renderSection(rrs, false) }
