//go:build e2e

package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// parentNamedConf is BIND as the parent zone com. that takes updates signed
// with the key k8sgw. of the delegations (and transfers to loopback, for the
// test to read it).
const parentNamedConf = `options {
    directory "%[1]s";
    pid-file "%[1]s/named.pid";
    session-keyfile "%[1]s/session.key";
    listen-on port %[2]d { 127.0.0.1; };
    listen-on-v6 { none; };
    recursion no;
    dnssec-validation no;
    notify no;
    allow-transfer { 127.0.0.1; };
};
controls { };
key "k8sgw." {
    algorithm hmac-sha256;
    secret "%[3]s";
};
zone "com" {
    type primary;
    file "com.db";
    // As docs/features/secondaries.md tells: the key may change only delegations
    // below com. and its registry.
    update-policy {
        grant k8sgw. subdomain example.com. NS A AAAA;
        grant k8sgw. subdomain other.com. NS A AAAA;
        grant k8sgw. subdomain _k8s-gateway-delegation.com. TXT;
    };
};
`

// parentZoneFile holds a delegation record of example.com that the plugin
// did not write: it must stay.
const parentZoneFile = `$TTL 300
com. IN SOA ns.com. hostmaster.com. 1 300 60 604800 60
com. IN NS ns.com.
ns.com. IN A 127.0.0.1
example.com. IN NS legacy.ns.example.net.
`

func startParentBIND(t *testing.T, dir string, port int, secret string) *daemon {
	t.Helper()
	conf := filepath.Join(dir, "named.conf")
	writeFile(t, conf, fmt.Sprintf(parentNamedConf, dir, port, secret))
	if !fileExists(filepath.Join(dir, "com.db")) {
		writeFile(t, filepath.Join(dir, "com.db"), parentZoneFile)
	}
	d := startDaemon(t, "parent", dir, port, sbin(t, "named"), "-g", "-4", "-n", "1", "-c", conf)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if r, err := d.query("com.", 6); err == nil && r.Rcode == "NOERROR" {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("parent BIND not answering:\n%s", d.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// parentRecords returns the records of the parent's com. zone but its own
// apex and nameserver, as lines "name type data".
func parentRecords(t *testing.T, port int) string {
	t.Helper()
	out, err := exec.Command(digBin, "+noall", "+answer", "+nottlid", "-p", fmt.Sprint(port), "@127.0.0.1", "com.", "AXFR").CombinedOutput()
	if err != nil {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 4 && f[0] != "com." && f[0] != "ns.com." {
			lines = append(lines, f[0]+" "+f[2]+" "+strings.Join(f[3:], " "))
		}
	}
	return strings.Join(lines, "\n")
}

// waitParent waits until the parent's records below com. contain every line
// of want and none of notWant.
func waitParent(t *testing.T, port int, timeout time.Duration, want, notWant []string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		got := parentRecords(t, port)
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(got, w)
		}
		for _, w := range notWant {
			ok = ok && !strings.Contains(got, w)
		}
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("parent after %s:\n%s\nwant %q, not %q", timeout, got, want, notWant)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tsigSecret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// TestParentDelegation: the parent option keeps example.com's NS and glue
// in a real BIND parent current: written at start, moved with the
// nameserver's address, written again after the parent was away, never
// touching the NS record it did not write; a wrong key is logged.
func TestParentDelegation(t *testing.T) {
	dir, port := t.TempDir(), freePort(t)
	secret := tsigSecret(t)
	parent := startParentBIND(t, dir, port, secret)
	keyFile := filepath.Join(t.TempDir(), "k8sgw.key")
	writeFile(t, keyFile, secret+"\n")

	nameserverService(t, "192.0.2.53")
	cf := filepath.Join(t.TempDir(), "Corefile")
	writeFile(t, cf, fmt.Sprintf(`example.com:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    k8s_gateway {
        kubeconfig {$KUBECONFIG}
        apex dns1.kube-system
        ttl 30
        parent 127.0.0.1:%d key k8sgw. hmac-sha256 %s
    }
}
`, port, keyFile))
	rel, _ := filepath.Rel(repoRoot, cf)
	s := startServer(t, rel, kubeconfig)

	took := waitParent(t, port, 20*time.Second, []string{
		"example.com. NS dns1.kube-system.example.com.",
		"example.com. NS legacy.ns.example.net.",
		"dns1.kube-system.example.com. A 192.0.2.53",
	}, nil)
	t.Logf("delegation written %s after the plugin was ready", took.Round(time.Millisecond))
	// One TTL per RRset (RFC 2181 §5.2): the parent gives the NS record it
	// held at 300 the TTL of the plugin's (30), as docs/features/secondaries.md says.
	out, err := exec.Command(digBin, "+noall", "+answer", "-p", fmt.Sprint(port), "@127.0.0.1", "com.", "AXFR").CombinedOutput()
	if err != nil {
		t.Fatalf("dig: %v\n%s", err, out)
	}
	var nsTTLs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) == 5 && f[0] == "example.com." && f[3] == "NS" {
			nsTTLs = append(nsTTLs, f[4]+" "+f[1])
		}
	}
	if got := strings.Join(nsTTLs, ", "); got != "dns1.kube-system.example.com. 30, legacy.ns.example.net. 30" && got != "legacy.ns.example.net. 30, dns1.kube-system.example.com. 30" {
		t.Errorf("the parent's NS RRset of example.com (name TTL): %s; want both at the plugin's TTL 30", got)
	}

	setLBStatus(t, "kube-system", "service", "dns1", "192.0.2.54", "2001:db8::54")
	took = waitParent(t, port, 20*time.Second, []string{
		"dns1.kube-system.example.com. A 192.0.2.54", "dns1.kube-system.example.com. AAAA 2001:db8::54",
		"example.com. NS legacy.ns.example.net.",
	}, []string{"192.0.2.53"})
	t.Logf("glue moved %s after the Service's address changed", took.Round(time.Millisecond))

	// The parent is away while the address moves; it gets the change when it is back.
	parent.proc.Stop(10 * time.Second)
	setLBStatus(t, "kube-system", "service", "dns1", "192.0.2.55")
	time.Sleep(2 * time.Second)
	startParentBIND(t, dir, port, secret)
	took = waitParent(t, port, 90*time.Second, []string{
		"dns1.kube-system.example.com. A 192.0.2.55", "example.com. NS legacy.ns.example.net.",
	}, []string{"192.0.2.54", "2001:db8::54"})
	t.Logf("glue current %s after the parent came back", took.Round(time.Millisecond))
	if n := strings.Count("\n"+parentRecords(t, port), "\nexample.com. NS dns1.kube-system.example.com."); n != 1 {
		t.Errorf("the NS record is in the parent %d times", n)
	}

	// A wrong key: the parent refuses, the plugin says so.
	badKey := filepath.Join(t.TempDir(), "bad.key")
	writeFile(t, badKey, tsigSecret(t)+"\n")
	cf2 := filepath.Join(t.TempDir(), "Corefile")
	writeFile(t, cf2, fmt.Sprintf(`other.com:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    k8s_gateway {
        kubeconfig {$KUBECONFIG}
        apex ns.example.net.
        parent 127.0.0.1:%d key k8sgw. hmac-sha256 %s
    }
}
`, port, badKey))
	rel2, _ := filepath.Rel(repoRoot, cf2)
	s2 := startServer(t, rel2, kubeconfig)
	deadline := time.Now().Add(20 * time.Second)
	refused := func(out string) bool {
		return strings.Contains(out, "plugin/k8s_gateway: parent:") && strings.Contains(out, "k8sgw.")
	}
	for !refused(s2.output()) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if out := s2.output(); !refused(out) {
		t.Errorf("no log line naming the refused key:\n%s", out)
	}
	if got := parentRecords(t, port); strings.Contains(got, "other.com") {
		t.Errorf("the parent took an update signed with a wrong key:\n%s", got)
	}
	_ = s
}

// TestParentClusterZones: with cluster_zones the parent option keeps the
// delegation of the block's own zone in a real BIND parent, and never that
// of a cluster zone: example.com delegates it (NS and glue in its own
// zone), and a cluster zone's delegation in com. would bypass the block's.
func TestParentClusterZones(t *testing.T) {
	dir, port := t.TempDir(), freePort(t)
	secret := tsigSecret(t)
	startParentBIND(t, dir, port, secret)
	keyFile := filepath.Join(t.TempDir(), "k8sgw.key")
	writeFile(t, keyFile, secret+"\n")
	nameserverService(t, "192.0.2.53")
	cf := filepath.Join(t.TempDir(), "Corefile")
	writeFile(t, cf, fmt.Sprintf(`example.com:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    transfer {
        to *
    }
    k8s_gateway {
        apex dns1.kube-system
        ttl 30
        parent 127.0.0.1:%d key k8sgw. hmac-sha256 %s
        cluster_zones
        cluster one {
            kubeconfig {$KUBECONFIG}
            subdomain
        }
    }
}
`, port, keyFile))
	rel, _ := filepath.Rel(repoRoot, cf)
	s := startServer(t, rel, kubeconfig)
	ns := namespace(t)
	lbServiceAt(t, kubeconfig, ns, "lb", "", "192.0.2.40")
	inOne := "lb." + ns + ".one.example.com."
	s.eventually(t, 10*time.Second, inOne, dns.TypeA, positive(inOne+" 30 IN A 192.0.2.40"))
	waitParent(t, port, 20*time.Second, []string{
		"example.com. NS dns1.kube-system.example.com.",
		"dns1.kube-system.example.com. A 192.0.2.53",
	}, nil)
	// The block's zone delegates the cluster zone; the parent holds nothing of it.
	delegation := "one.example.com. 30 IN NS dns1.kube-system.one.example.com."
	if got := axfr(t, s.port, "example.com."); !slices.Contains(got, delegation) {
		t.Errorf("example.com. holds no delegation %q:\n%s", delegation, strings.Join(got, "\n"))
	}
	time.Sleep(2 * time.Second) // another round of the parent option
	if got := parentRecords(t, port); strings.Contains(got, "one.example.com") {
		t.Errorf("the parent holds records of the cluster zone:\n%s", got)
	}
}
