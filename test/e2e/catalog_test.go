//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// catalogCorefile is a hidden primary of the zones given (%[1]s; %[2]s are
// the same as server block keys), with the catalog catalog.invalid listing
// them; SECONDARY1 and SECONDARY2 get NOTIFY.
const catalogCorefile = `%[2]s catalog.invalid:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    transfer {
        to {$SECONDARY1} {$SECONDARY2}
    }
    k8s_gateway %[1]s {
        kubeconfig {$KUBECONFIG}
        apex dns1.kube-system
        ttl 30
        catalog catalog.invalid
    }
}
`

// startCatalogSecondary runs BIND or Knot with the catalog configuration of
// test/e2e/testdata/secondaries (only the catalog zone is configured).
func startCatalogSecondary(t *testing.T, kind string, port, primaryPort int) *daemon {
	t.Helper()
	dir := t.TempDir()
	switch kind {
	case "bind":
		conf := filepath.Join(dir, "named.conf")
		writeFile(t, conf, renderConfig(t, "test/e2e/testdata/secondaries/named-catalog.conf", secondaryVars(dir, port, primaryPort)))
		return startDaemon(t, kind, dir, port, sbin(t, "named"), "-g", "-4", "-n", "1", "-c", conf)
	default:
		conf := filepath.Join(dir, "knot.conf")
		writeFile(t, conf, renderConfig(t, "test/e2e/testdata/secondaries/knot-catalog.conf", secondaryVars(dir, port, primaryPort)))
		return startDaemon(t, kind, dir, port, sbin(t, "knotd"), "-c", conf)
	}
}

// catalogConfig returns catalogCorefile for zones.
func catalogConfig(zones ...string) string {
	keys := make([]string, len(zones))
	for i, z := range zones {
		keys[i] = z + ":{$K8S_GATEWAY_PORT}"
	}
	return fmt.Sprintf(catalogCorefile, strings.Join(zones, " "), strings.Join(keys, " "))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitServes waits until every peer serves zone at the primary's serial, or,
// with gone, until none serves it any more.
func waitServes(t *testing.T, s *server, peers []*daemon, zone string, gone bool, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for _, p := range peers {
		for {
			r, err := p.query(zone, dns.TypeSOA)
			served := err == nil && r.Rcode == "NOERROR" && len(r.Answer) == 1
			want, _ := s.query(zone, dns.TypeSOA)
			switch {
			case gone && !served:
			case !gone && served && len(want.Answer) == 1 && r.Answer[0] == want.Answer[0]:
			case time.Now().After(deadline):
				t.Fatalf("%s: zone %s served %v (want %v) after %s: %v %v; the plugin's SOA: %v", p.name, zone, served, !gone, timeout, r, err, want)
			default:
				time.Sleep(100 * time.Millisecond)
				continue
			}
			break
		}
	}
}

// TestCatalogSecondaries: BIND and Knot, configured with the catalog zone
// only, serve every zone of the block, follow a Corefile reload that adds a
// zone and one that removes a zone, and answer as the primary does.
func TestCatalogSecondaries(t *testing.T) {
	bindPort, knotPort := freePort(t), freePort(t)
	dir := t.TempDir()
	corefile := filepath.Join(dir, "Corefile")
	writeFile(t, corefile, catalogConfig("example.com", "example.org"))
	rel, err := filepath.Rel(repoRoot, corefile)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, rel, kubeconfig,
		fmt.Sprintf("SECONDARY1=127.0.0.1:%d", bindPort), fmt.Sprintf("SECONDARY2=127.0.0.1:%d", knotPort))
	// BIND refuses a zone whose NS names have no address: the nameserver's
	// Service gives them.
	nameserverService(t, "192.0.2.53")
	s.eventually(t, 5*time.Second, "dns1.kube-system.example.org.", dns.TypeA, positive("dns1.kube-system.example.org. 30 IN A 192.0.2.53"))
	ns := namespace(t)
	lb := lbService(t, s, ns, "192.0.2.40")

	peers := []*daemon{startCatalogSecondary(t, "bind", bindPort, s.port), startCatalogSecondary(t, "knot", knotPort, s.port)}
	start := time.Now()
	// (Knot does not answer queries for a catalog it interprets: the
	// members tell that it read it.)
	for _, zone := range []string{"example.com.", "example.org."} {
		waitServes(t, s, peers, zone, false, 30*time.Second)
	}
	t.Logf("member zones served by both secondaries %s after they started", time.Since(start).Round(time.Millisecond))
	sameAnswers(t, s, peers, []question{
		{"example.com.", dns.TypeSOA}, {"example.com.", dns.TypeNS}, {"example.org.", dns.TypeNS},
		{lb, dns.TypeA}, {"dns1.kube-system.example.org.", dns.TypeA}, {"nothing.example.org.", dns.TypeA},
	})

	// A reload that adds a zone: the catalog lists it, the secondaries add it.
	writeFile(t, corefile, catalogConfig("example.com", "example.org", "example.net"))
	start = time.Now()
	s.Signal(syscall.SIGUSR1)
	waitServes(t, s, peers, "example.net.", false, 30*time.Second)
	t.Logf("added zone served by both secondaries %s after the reload", time.Since(start).Round(time.Millisecond))

	// A reload that removes a zone: the secondaries drop it.
	writeFile(t, corefile, catalogConfig("example.com", "example.net"))
	start = time.Now()
	s.Signal(syscall.SIGUSR1)
	waitServes(t, s, peers, "example.org.", true, 30*time.Second)
	t.Logf("removed zone dropped by both secondaries %s after the reload", time.Since(start).Round(time.Millisecond))
	waitServes(t, s, peers, "example.com.", false, 10*time.Second)
}

// TestCatalogGroup: with `group`, every member carries the group property.
// Knot applies the template of that name from its `catalog-template` list
// (knot-catalog-group.conf: the member's copy is in a file of the group's
// template); BIND 9.18 serves the members and ignores the property, with a
// log line.
func TestCatalogGroup(t *testing.T) {
	bindPort, knotPort := freePort(t), freePort(t)
	dir := t.TempDir()
	corefile := filepath.Join(dir, "Corefile")
	writeFile(t, corefile, strings.Replace(catalogConfig("example.com"), "catalog catalog.invalid", "catalog catalog.invalid group blue", 1))
	rel, err := filepath.Rel(repoRoot, corefile)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, rel, kubeconfig,
		fmt.Sprintf("SECONDARY1=127.0.0.1:%d", bindPort), fmt.Sprintf("SECONDARY2=127.0.0.1:%d", knotPort))
	nameserverService(t, "192.0.2.53")
	s.eventually(t, 5*time.Second, "dns1.kube-system.example.com.", dns.TypeA, positive("dns1.kube-system.example.com. 30 IN A 192.0.2.53"))
	bind := startCatalogSecondary(t, "bind", bindPort, s.port)
	kdir := t.TempDir()
	conf := filepath.Join(kdir, "knot.conf")
	writeFile(t, conf, renderConfig(t, "test/e2e/testdata/secondaries/knot-catalog-group.conf", secondaryVars(kdir, knotPort, s.port)))
	knot := startDaemon(t, "knot", kdir, knotPort, sbin(t, "knotd"), "-c", conf)
	waitServes(t, s, []*daemon{bind, knot}, "example.com.", false, 30*time.Second)

	// Knot: the member's copy is in the file of the group's template.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(kdir, "example.com.blue.zone")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(kdir)
			t.Fatalf("Knot: no example.com.blue.zone after 10s (template of the group blue not applied); its directory: %v", entries)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(kdir, "example.com.zone")); err == nil {
		t.Error("Knot: example.com.zone written too: the default template applied")
	}
	// BIND: serves the member, says it ignores the property.
	var line string
	for _, l := range strings.Split(bind.output(), "\n") {
		if strings.Contains(l, "invalid record in catalog zone - group.") && strings.HasSuffix(strings.TrimSpace(l), "ignoring") {
			line = l
			break
		}
	}
	if line == "" {
		t.Errorf("BIND did not log that it ignores the group property:\n%s", bind.output())
	}
	t.Logf("BIND: %s", line)
}

// catalogViewsCorefile is two views of example.com (the internal one for
// 127.0.0.2), each with the catalog catalog.invalid of its own group.
const catalogViewsCorefile = `example.com:{$K8S_GATEWAY_PORT} catalog.invalid:{$K8S_GATEWAY_PORT} {
    view internal {
        expr incidr(client_ip(), '127.0.0.2/32')
    }
    bind 127.0.0.1
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    transfer {
        to *
    }
    k8s_gateway example.com {
        apex dns1.kube-system
        ttl 30
        catalog catalog.invalid group internal
    }
}

example.com:{$K8S_GATEWAY_PORT} catalog.invalid:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    transfer {
        to *
    }
    k8s_gateway example.com {
        apex dns1.kube-system
        ttl 30
        catalog catalog.invalid group external
    }
}
`

// TestCatalogViews: each view serves a catalog of its own: a secondary
// that a view's address selects learns the zones with that view's
// properties, and transfers both the catalog and its members from it.
func TestCatalogViews(t *testing.T) {
	corefile := filepath.Join(t.TempDir(), "Corefile")
	writeFile(t, corefile, catalogViewsCorefile)
	rel, err := filepath.Rel(repoRoot, corefile)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, rel, kubeconfig)
	transfer := func(from, zone string) []string {
		out, err := exec.Command(digBin, "-b", from, "@127.0.0.1", "-p", strconv.Itoa(s.port), "+tries=1", "+time=5", "+onesoa",
			"+noall", "+answer", zone, "AXFR").CombinedOutput()
		if err != nil {
			t.Fatalf("dig -b %s AXFR %s: %v\n%s", from, zone, err, out)
		}
		var rrs []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			rrs = append(rrs, strings.Join(strings.Fields(l), " "))
		}
		return rrs
	}
	for _, v := range []struct{ from, group, other string }{{"127.0.0.2", "internal", "external"}, {"127.0.0.1", "external", "internal"}} {
		cat := strings.Join(transfer(v.from, "catalog.invalid."), "\n")
		for _, want := range []string{"PTR example.com.", `TXT "` + v.group + `"`, `version.catalog.invalid. 30 IN TXT "2"`} {
			if !strings.Contains(cat, want) {
				t.Errorf("the catalog from %s holds no %q:\n%s", v.from, want, cat)
			}
		}
		if strings.Contains(cat, `"`+v.other+`"`) {
			t.Errorf("the catalog from %s holds the other view's group:\n%s", v.from, cat)
		}
		if zone := transfer(v.from, "example.com."); len(zone) < 2 || !strings.Contains(zone[0], "SOA") {
			t.Errorf("example.com. from %s: %q", v.from, zone)
		}
	}
}
