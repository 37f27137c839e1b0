//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestReloadTransfers: BIND and Knot serve two zones and the catalog from
// the plugin. Reloads of an unchanged Corefile move no serial and cause no
// transfer; a reload that adds a nameserver name moves the zones' serials,
// keeps the catalog's, and the IXFR from the serials before it is
// incremental: the secondaries take the new NS records only.
func TestReloadTransfers(t *testing.T) {
	bindPort, knotPort := freePort(t), freePort(t)
	dir := t.TempDir()
	corefile := filepath.Join(dir, "Corefile")
	// Only kube-system's objects: other tests' namespaces, deleted in the
	// background, change no zone during this one.
	config := strings.Replace(catalogConfig("example.com", "example.org"), "ttl 30", "ttl 30\n        namespaces kube-system", 1)
	writeFile(t, corefile, config)
	rel, err := filepath.Rel(repoRoot, corefile)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, rel, kubeconfig,
		fmt.Sprintf("SECONDARY1=127.0.0.1:%d", bindPort), fmt.Sprintf("SECONDARY2=127.0.0.1:%d", knotPort))
	nameserverService(t, "192.0.2.53")
	// The second nameserver's Service, for the reload that names it.
	kubectl(t, "apiVersion: v1\nkind: Service\nmetadata: {name: dns2, namespace: kube-system}\nspec: {type: LoadBalancer, ports: [{name: dns, port: 53, protocol: UDP}]}\n", "apply", "-f", "-")
	t.Cleanup(func() { kubectlErr("", "-n", "kube-system", "delete", "service", "dns2") })
	setLBStatus(t, "kube-system", "service", "dns2", "192.0.2.54")
	s.eventually(t, 5*time.Second, "dns2.kube-system.example.org.", dns.TypeA, positive("dns2.kube-system.example.org. 30 IN A 192.0.2.54"))
	// Past the second of the last change: its serial is the zones' last.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))

	peers := []*daemon{startCatalogSecondary(t, "bind", bindPort, s.port), startCatalogSecondary(t, "knot", knotPort, s.port)}
	zones := []string{"example.com.", "example.org.", "catalog.invalid."}
	for _, z := range zones[:2] {
		waitServes(t, s, peers, z, false, 30*time.Second)
	}
	serials := func() []uint32 {
		out := make([]uint32, len(zones))
		for i, z := range zones {
			r, err := s.query(z, dns.TypeSOA)
			if err != nil || len(r.Answer) != 1 {
				t.Fatalf("SOA of %s: %v %v", z, r, err)
			}
			fmt.Sscan(strings.Fields(r.Answer[0])[6], &out[i])
		}
		return out
	}
	// reload signals the server and waits until the new instance has
	// published and sent its NOTIFYs (1 s and 5 s after its start).
	instances := 1
	reload := func() {
		t.Helper()
		if err := s.Signal(syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		instances++
		deadline := time.Now().Add(30 * time.Second)
		for strings.Count(s.output(), " kinds for zones ") < instances {
			if time.Now().After(deadline) {
				t.Fatalf("the reloaded instance has not published after 30s:\n%s", s.output())
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(7 * time.Second)
	}
	transfers := func(from []int) (n int, lines []string) {
		for i, p := range peers {
			for _, l := range strings.Split(p.output()[from[i]:], "\n") {
				if strings.Contains(l, "Transfer completed") || strings.Contains(l, ", incoming,") && strings.Contains(l, "finished") {
					n, lines = n+1, append(lines, p.name+": "+l)
				}
			}
		}
		return n, lines
	}
	marks := func() []int { return []int{len(peers[0].output()), len(peers[1].output())} }

	before := serials()
	for i := 1; i <= 2; i++ {
		from := marks()
		reload()
		if got := serials(); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Errorf("reload %d changed nothing, but the serials of %v moved: %v → %v", i, zones, before, got)
		}
		if n, lines := transfers(from); n > 0 {
			t.Errorf("reload %d changed nothing, but the secondaries transferred %d times:\n%s", i, n, strings.Join(lines, "\n"))
		}
	}

	// A second nameserver name: both zones change by an NS record.
	from := marks()
	writeFile(t, corefile, strings.Replace(config, "apex dns1.kube-system", "apex dns1.kube-system\n        secondary dns2.kube-system", 1))
	reload()
	after := serials()
	for i, z := range zones[:2] {
		if after[i] == before[i] {
			t.Errorf("%s: the serial did not move with the reload that changed it", z)
		}
		ixfr := ixfrFrom(t, s.port, z, before[i])
		if len(ixfr) < 4 || ixfr[1].Header().Rrtype != dns.TypeSOA {
			t.Errorf("%s: IXFR from %d after the reload is not incremental (%d records)", z, before[i], len(ixfr))
		}
		waitServes(t, s, peers, z, false, 30*time.Second)
		if r, err := peers[1].query(z, dns.TypeNS); err != nil || len(r.Answer) != 2 {
			t.Errorf("%s: knot's NS after the reload: %v %v", z, r, err)
		}
	}
	if after[2] != before[2] {
		t.Errorf("the catalog's serial moved with a reload that did not change its members: %d → %d", before[2], after[2])
	}
	for i, p := range peers {
		out := p.output()[from[i]:]
		if strings.Contains(out, "AXFR, incoming") || strings.Contains(out, "AXFR-style") {
			t.Errorf("%s took a whole zone after the reload that changed an NS record:\n%s", p.name, out)
		}
	}
	n, _ := transfers(from)
	t.Logf("no transfer after 2 reloads that changed nothing; %d transfers (IXFR) after the one that changed both zones", n)
}

// ixfrFrom asks the plugin at port for an IXFR of zone from serial and
// returns the records of the answer.
func ixfrFrom(t *testing.T, port int, zone string, serial uint32) []dns.RR {
	t.Helper()
	m := new(dns.Msg)
	m.SetIxfr(zone, serial, "ns.", "hostmaster.")
	tr := &dns.Transfer{DialTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second}
	env, err := tr.In(m, fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	var out []dns.RR
	for e := range env {
		if e.Error != nil {
			t.Fatal(e.Error)
		}
		out = append(out, e.RR...)
	}
	return out
}
