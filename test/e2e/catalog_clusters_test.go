//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// clusterZonesCorefile is a hidden primary of example.com whose cluster
// blocks (%s) each publish under a subdomain served as a zone of its own
// (cluster_zones), listed in the catalog catalog.invalid.
const clusterZonesCorefile = `example.com:{$K8S_GATEWAY_PORT} catalog.invalid:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    transfer {
        to {$SECONDARY1} {$SECONDARY2}
    }
    k8s_gateway example.com {
        apex dns1.kube-system
        ttl 30
        catalog catalog.invalid
        cluster_zones
%s    }
}
`

// clusterZonesConfig returns clusterZonesCorefile with a cluster block per
// name, each under the subdomain of its name: "two" reads the second API
// server ($KUBECONFIG2), any other the suite's.
func clusterZonesConfig(names ...string) string {
	var blocks strings.Builder
	for _, n := range names {
		kc := "{$KUBECONFIG}"
		if n == "two" {
			kc = "{$KUBECONFIG2}"
		}
		fmt.Fprintf(&blocks, "        cluster %s {\n            kubeconfig %s\n            subdomain\n        }\n", n, kc)
	}
	return fmt.Sprintf(clusterZonesCorefile, blocks.String())
}

// startTransferringSecondary is startCatalogSecondary with AXFR allowed to
// loopback, for the test to compare the zones it holds.
func startTransferringSecondary(t *testing.T, kind string, port, primaryPort int) *daemon {
	t.Helper()
	dir := t.TempDir()
	vars := secondaryVars(dir, port, primaryPort)
	if kind == "bind" {
		text := renderConfig(t, "test/e2e/testdata/secondaries/named-catalog.conf", vars)
		text = strings.Replace(text, "allow-transfer { none; };", "allow-transfer { 127.0.0.1; };", 1)
		conf := filepath.Join(dir, "named.conf")
		writeFile(t, conf, text)
		return startDaemon(t, kind, dir, port, sbin(t, "named"), "-g", "-4", "-n", "1", "-c", conf)
	}
	text := renderConfig(t, "test/e2e/testdata/secondaries/knot-catalog.conf", vars)
	text = strings.Replace(text, "acl:\n", "acl:\n  - id: transfer_to_test\n    address: 127.0.0.1\n    action: transfer\n", 1)
	text = strings.ReplaceAll(text, "acl: notify_from_k8s_gateway\n", "acl: [notify_from_k8s_gateway, transfer_to_test]\n")
	conf := filepath.Join(dir, "knot.conf")
	writeFile(t, conf, text)
	return startDaemon(t, kind, dir, port, sbin(t, "knotd"), "-c", conf)
}

// axfr returns the zone as dig +onesoa AXFR prints it from 127.0.0.1:port,
// one record a line, sorted.
func axfr(t *testing.T, port int, zone string) []string {
	t.Helper()
	out, err := exec.Command(digBin, "@127.0.0.1", "-p", strconv.Itoa(port), "+tries=1", "+time=5", "+onesoa",
		"+noall", "+answer", zone, "AXFR").CombinedOutput()
	if err != nil {
		t.Fatalf("dig AXFR %s at %d: %v\n%s", zone, port, err, out)
	}
	var rrs []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, ";") {
			rrs = append(rrs, strings.Join(strings.Fields(l), " "))
		}
	}
	slices.Sort(rrs)
	return rrs
}

// sameZone fails unless every peer transfers zone exactly as the plugin does.
// It tries again for a few seconds: a change of the zone may be on its way
// to the secondaries (a change within a second that already has a serial
// gets its serial, and its NOTIFY, on the next second).
func sameZone(t *testing.T, s *server, peers []*daemon, zone string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		want := axfr(t, s.port, zone)
		if len(want) < 3 {
			t.Fatalf("the plugin transfers %s as %q", zone, want)
		}
		var diffs []string
		for _, p := range peers {
			if got := axfr(t, p.port, zone); !slices.Equal(got, want) {
				diffs = append(diffs, fmt.Sprintf("%s transfers %s as\n%s\nthe plugin as\n%s", p.name, zone, strings.Join(got, "\n"), strings.Join(want, "\n")))
			}
		}
		if len(diffs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(strings.Join(diffs, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestCatalogClusterZones: with cluster_zones, each cluster block's
// subdomain is a zone of its own that the catalog lists: BIND and Knot,
// configured with the catalog only, serve it as the plugin transfers it, add
// the zone of a cluster that joins (a reload) and drop that of one that
// leaves, while example.com delegates to each. The clusters are two real API
// servers: each zone holds its own cluster's objects.
func TestCatalogClusterZones(t *testing.T) {
	bindPort, knotPort := freePort(t), freePort(t)
	corefile := filepath.Join(t.TempDir(), "Corefile")
	writeFile(t, corefile, clusterZonesConfig("one"))
	rel, err := filepath.Rel(repoRoot, corefile)
	if err != nil {
		t.Fatal(err)
	}
	kc2 := secondCluster(t)
	s := startServer(t, rel, kubeconfig, "KUBECONFIG2="+kc2,
		fmt.Sprintf("SECONDARY1=127.0.0.1:%d", bindPort), fmt.Sprintf("SECONDARY2=127.0.0.1:%d", knotPort))
	nameserverService(t, "192.0.2.53")
	s.eventually(t, 10*time.Second, "dns1.kube-system.one.example.com.", dns.TypeA, positive("dns1.kube-system.one.example.com. 30 IN A 192.0.2.53"))
	ns := fleetNamespace(t, kubeconfig, kc2)
	lbServiceAt(t, kubeconfig, ns, "lb", "", "192.0.2.40")
	lbServiceAt(t, kc2, ns, "lb", "", "192.0.2.41") // the same Service in cluster two, another address
	inOne, inTwo := "lb."+ns+".one.example.com.", "lb."+ns+".two.example.com."
	s.eventually(t, 10*time.Second, inOne, dns.TypeA, positive(inOne+" 30 IN A 192.0.2.40"))
	// The block's zone delegates the cluster's, with glue.
	delegation := []string{
		"one.example.com. 30 IN NS dns1.kube-system.one.example.com.",
		"dns1.kube-system.one.example.com. 30 IN A 192.0.2.53",
	}
	if got := axfr(t, s.port, "example.com."); !slices.Contains(got, delegation[0]) || !slices.Contains(got, delegation[1]) {
		t.Errorf("example.com. holds no delegation %q:\n%s", delegation, strings.Join(got, "\n"))
	}

	peers := []*daemon{startTransferringSecondary(t, "bind", bindPort, s.port), startTransferringSecondary(t, "knot", knotPort, s.port)}
	start := time.Now()
	for _, zone := range []string{"example.com.", "one.example.com."} {
		waitServes(t, s, peers, zone, false, 30*time.Second)
	}
	t.Logf("the block's zone and the cluster's served by both secondaries %s after they started", time.Since(start).Round(time.Millisecond))
	sameZone(t, s, peers, "example.com.")
	sameZone(t, s, peers, "one.example.com.")
	sameAnswers(t, s, peers, []question{{inOne, dns.TypeA}, {"one.example.com.", dns.TypeNS}, {"one.example.com.", dns.TypeSOA}})

	// A cluster joins: its zone appears on both secondaries.
	writeFile(t, corefile, clusterZonesConfig("one", "two"))
	start = time.Now()
	s.Signal(syscall.SIGUSR1)
	waitServes(t, s, peers, "two.example.com.", false, 30*time.Second)
	t.Logf("the zone of a cluster that joined served by both secondaries %s after the reload", time.Since(start).Round(time.Millisecond))
	s.eventually(t, 10*time.Second, inTwo, dns.TypeA, positive(inTwo+" 30 IN A 192.0.2.41"))
	s.eventually(t, 10*time.Second, inOne, dns.TypeA, positive(inOne+" 30 IN A 192.0.2.40"))
	waitServes(t, s, peers, "example.com.", false, 10*time.Second)
	sameZone(t, s, peers, "two.example.com.")
	sameZone(t, s, peers, "example.com.")
	sameAnswers(t, s, peers, []question{{inTwo, dns.TypeA}, {inOne, dns.TypeA}})

	// A cluster leaves: its zone goes.
	writeFile(t, corefile, clusterZonesConfig("two"))
	start = time.Now()
	s.Signal(syscall.SIGUSR1)
	waitServes(t, s, peers, "one.example.com.", true, 30*time.Second)
	t.Logf("the zone of a cluster that left dropped by both secondaries %s after the reload", time.Since(start).Round(time.Millisecond))
	waitServes(t, s, peers, "example.com.", false, 10*time.Second)
	sameZone(t, s, peers, "example.com.")
	sameZone(t, s, peers, "two.example.com.")
}
