//go:build e2e

package e2e

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The DNS side of the bare-metal stage: a test root and the parent zone com
// on BIND, signed, that delegate example.com to the plugin with the NS and
// glue records of the chart's NOTES and the DS of the plugin's key, and a
// validating unbound that iterates from that root. Every server answers on
// port 53 of an address of 127.0.0.0/8 of its own (an iterating resolver
// asks port 53 of the glue address), so nothing leaves loopback; the stage
// runs as root.

// loopbackAddr returns an address of 127.0.0.0/8, other than 127.0.0.1, on
// which port 53 is free for UDP and TCP.
func loopbackAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.%d.%d.%d", 100+rand.IntN(150), 1+rand.IntN(254), 1+rand.IntN(254))
		hp := net.JoinHostPort(addr, "53")
		u, err := net.ListenPacket("udp", hp)
		if err != nil {
			continue
		}
		l, err := net.Listen("tcp", hp)
		u.Close()
		if err != nil {
			continue
		}
		l.Close()
		return addr
	}
	t.Fatal("no loopback address with port 53 free")
	return ""
}

// zoneKey makes an ECDSA P-256 key with the SEP flag (a CSK) for zone in dir
// and returns the DS record of it.
func zoneKey(t *testing.T, dir, zone string) (ds string) {
	t.Helper()
	out, err := exec.Command(sbin(t, "dnssec-keygen"), "-q", "-K", dir, "-a", "ECDSAP256SHA256", "-f", "KSK", "-n", "ZONE", zone).CombinedOutput()
	if err != nil {
		t.Fatalf("dnssec-keygen %s: %v\n%s", zone, err, out)
	}
	return dsFromKey(t, filepath.Join(dir, strings.TrimSpace(string(out))+".key"))
}

// dsFromKey returns the SHA-256 DS record of a .key file.
func dsFromKey(t *testing.T, keyFile string) string {
	t.Helper()
	out, err := exec.Command(sbin(t, "dnssec-dsfromkey"), "-2", keyFile).CombinedOutput()
	if err != nil {
		t.Fatalf("dnssec-dsfromkey %s: %v\n%s", keyFile, err, out)
	}
	return strings.TrimSpace(string(out))
}

// signZone writes origin's zone file text into dir and signs it with the
// keys of dir (dnssec-signzone -S), as FILE.signed.
func signZone(t *testing.T, dir, origin, file, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// -z: each key is a CSK, the KSK flag does not keep it from signing.
	cmd := exec.Command(sbin(t, "dnssec-signzone"), "-S", "-z", "-K", dir, "-o", origin, "-f", file+".signed", file)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dnssec-signzone %s: %v\n%s", origin, err, out)
	}
}

// parents is BIND serving the test root and com.
type parents struct {
	*daemon
	addr   string // where it answers, port 53
	anchor string // the DS of the root's key: the resolver's trust anchor
}

// startParents signs a root and the zone com, which delegates example.com
// with delegation (the NS and glue records, one a line) and childDS, and
// serves both with BIND.
func startParents(t *testing.T, delegation []string, childDS string) *parents {
	t.Helper()
	dir, addr := t.TempDir(), loopbackAddr(t)
	// named listens only on the addresses of interfaces, so this one goes on
	// lo while the test runs.
	if out, err := exec.Command("ip", "addr", "add", addr+"/32", "dev", "lo").CombinedOutput(); err != nil {
		t.Fatalf("ip addr add %s/32 dev lo (the stage runs as root): %v\n%s", addr, err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "addr", "del", addr+"/32", "dev", "lo").Run() })
	rootDS, comDS := zoneKey(t, dir, "."), zoneKey(t, dir, "com")
	const soa = "$TTL 300\n%s 300 IN SOA ns.%s hostmaster.%s 1 3600 600 86400 60\n"
	signZone(t, dir, "com", "com.db", fmt.Sprintf(soa, "com.", "com.", "com.")+
		"com. 300 IN NS ns.com.\nns.com. 300 IN A "+addr+"\n"+
		strings.Join(delegation, "\n")+"\n"+childDS+"\n")
	signZone(t, dir, ".", "root.db", fmt.Sprintf(soa, ".", "root.", "root.")+
		". 300 IN NS ns.root.\nns.root. 300 IN A "+addr+"\n"+
		"com. 300 IN NS ns.com.\nns.com. 300 IN A "+addr+"\n"+comDS+"\n")
	conf := filepath.Join(dir, "named.conf")
	text := renderConfig(t, "test/e2e/testdata/baremetal-named.conf", map[string]string{"DIR": dir, "ADDR": addr})
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, "named (root, com)", dir, 53, sbin(t, "named"), "-g", "-4", "-n", "1", "-c", conf)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if r, err := resolveAt(addr, 53, "com.", "SOA", "+norecurse"); err == nil && r.Rcode == "NOERROR" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("BIND does not serve com on %s:\n%s", addr, d.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return &parents{daemon: d, addr: addr, anchor: rootDS}
}

// startResolver runs a validating unbound whose root hints name the test root
// of p and whose only trust anchor is its DS.
func startResolver(t *testing.T, name string, p *parents) *daemon {
	t.Helper()
	dir, port := t.TempDir(), freePort(t)
	hints := ". 3600000 NS ns.root.\nns.root. 3600000 A " + p.addr + "\n"
	if err := os.WriteFile(filepath.Join(dir, "root.hints"), []byte(hints), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "unbound.conf")
	text := renderConfig(t, "test/e2e/testdata/baremetal-unbound.conf", map[string]string{
		"DIR": dir, "PORT": strconv.Itoa(port), "TRUST_ANCHOR": p.anchor,
	})
	// A name outside every zone of the chain: the answer caches nothing
	// the test asks later.
	return runUnbound(t, name, dir, port, conf, text, "ready.invalid.", "A")
}
