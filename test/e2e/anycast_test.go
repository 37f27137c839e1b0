//go:build e2e

package e2e

import (
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// anycastNode is one secondary of TestAnycastSecondaries: a service address
// (the anycast one in production) and an address of its own.
type anycastNode struct {
	*daemon
	id               string
	anycast, unicast string
	port             int
}

// startAnycastNode runs BIND or Knot with the anycast configuration of
// test/e2e/testdata/secondaries.
func startAnycastNode(t *testing.T, kind, id, anycast, unicast string, port, primaryPort int) *anycastNode {
	t.Helper()
	dir := t.TempDir()
	vars := map[string]string{
		"DIR": dir, "ANYCAST_IP": anycast, "UNICAST_IP": unicast, "LISTEN_PORT": strconv.Itoa(port), "NODE_ID": id,
		"PRIMARY_IP": "127.0.0.1", "PRIMARY_PORT": strconv.Itoa(primaryPort), "NOTIFY_FROM": "127.0.0.1",
	}
	n := &anycastNode{id: id, anycast: anycast, unicast: unicast, port: port}
	if kind == "bind" {
		conf := filepath.Join(dir, "named.conf")
		writeFile(t, conf, renderConfig(t, "test/e2e/testdata/secondaries/named-anycast.conf", vars))
		n.daemon = startDaemon(t, id, dir, port, sbin(t, "named"), "-g", "-4", "-n", "1", "-c", conf)
	} else {
		conf := filepath.Join(dir, "knot.conf")
		writeFile(t, conf, renderConfig(t, "test/e2e/testdata/secondaries/knot-anycast.conf", vars))
		n.daemon = startDaemon(t, id, dir, port, sbin(t, "knotd"), "-c", conf)
	}
	return n
}

// ask queries the node's service address with NSID and returns the answer
// and the NSID.
func (n *anycastNode) ask(name string, qtype uint16) (*dns.Msg, string, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.SetEdns0(1232, false)
	m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_NSID{Code: dns.EDNS0NSID})
	c := &dns.Client{Timeout: 2 * time.Second}
	r, _, err := c.Exchange(m, net.JoinHostPort(n.anycast, strconv.Itoa(n.port)))
	if err != nil {
		return nil, "", err
	}
	nsid := ""
	if opt := r.IsEdns0(); opt != nil {
		for _, o := range opt.Option {
			if x, ok := o.(*dns.EDNS0_NSID); ok {
				b, _ := hex.DecodeString(x.Nsid)
				nsid = string(b)
			}
		}
	}
	return r, nsid, nil
}

// waitAnswer waits until the node's service address answers name A with ip,
// from the node itself (its NSID).
func (n *anycastNode) waitAnswer(t *testing.T, name, ip string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r, nsid, err := n.ask(name, dns.TypeA)
		if err == nil && r.Rcode == dns.RcodeSuccess && r.Authoritative && len(r.Answer) == 1 && strings.HasSuffix(r.Answer[0].String(), "\t"+ip) && nsid == n.id {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (%s): %s A not %s after %s: %v (NSID %q) %v\n%s", n.id, n.anycast, name, ip, timeout, r, nsid, err, n.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// anycastCorefile: the hidden primary of example.com and example.org with the
// catalog catalog.invalid, NOTIFY to %s.
const anycastCorefile = `example.com:{$K8S_GATEWAY_PORT} example.org:{$K8S_GATEWAY_PORT} catalog.invalid:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    transfer {
        to %s
    }
    k8s_gateway example.com example.org {
        kubeconfig {$KUBECONFIG}
        apex dns1.kube-system
        ttl 30
        catalog catalog.invalid
    }
}
`

// TestAnycastSecondaries: the secondaries' configurations of docs/features/anycast.md.
// A BIND node and a Knot node, each with a service address and an address of
// its own, learn the zones from the catalog, transfer from their own
// addresses only (the primary's log names every client), take NOTIFY, answer
// on the service address with their NSID, and follow a change of the
// cluster. On one machine each node has its own service address (in
// production they share one, announced by each); BIND listens only on
// addresses of the machine's interfaces, so its service address is
// 127.0.0.1, and its NOTIFY goes there.
func TestAnycastSecondaries(t *testing.T) {
	bindPort, knotPort := freePort(t), freePort(t)
	nodes := []struct{ kind, id, anycast, unicast string }{
		{"bind", "bind-node-1", "127.0.0.1", "127.0.0.2"},
		{"knot", "knot-node-2", "127.0.1.3", "127.0.0.3"},
	}
	// NOTIFY to where each listens; the unicast addresses may transfer
	// (the transfer plugin compares the IP only; nothing listens on
	// 127.0.0.2 at BIND's port: that NOTIFY is refused, on loopback).
	to := fmt.Sprintf("127.0.0.1:%[1]d 127.0.0.2:%[1]d 127.0.0.3:%[2]d", bindPort, knotPort)
	dir := t.TempDir()
	corefile := filepath.Join(dir, "Corefile")
	writeFile(t, corefile, fmt.Sprintf(anycastCorefile, to))
	rel, err := filepath.Rel(repoRoot, corefile)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, rel, kubeconfig)
	nameserverService(t, "192.0.2.53")
	ns := namespace(t)
	lb := lbService(t, s, ns, "192.0.2.40")

	var peers []*anycastNode
	for i, n := range nodes {
		port := []int{bindPort, knotPort}[i]
		peers = append(peers, startAnycastNode(t, n.kind, n.id, n.anycast, n.unicast, port, s.port))
	}
	start := time.Now()
	for _, p := range peers {
		p.waitAnswer(t, lb, "192.0.2.40", 30*time.Second)
	}
	t.Logf("both nodes answer on their service addresses %s after they started", time.Since(start).Round(time.Millisecond))

	// A change reaches both by NOTIFY.
	start = time.Now()
	setLBStatus(t, ns, "service", "lb", "192.0.2.41")
	for _, p := range peers {
		p.waitAnswer(t, lb, "192.0.2.41", 10*time.Second)
	}
	t.Logf("a change answered by both nodes %s after the API write", time.Since(start).Round(time.Millisecond))
	for _, p := range peers {
		if p.id == "bind-node-1" && !strings.Contains(p.output(), "notify from 127.0.0.1") {
			t.Errorf("%s: no NOTIFY logged:\n%s", p.id, p.output())
		}
		if p.id == "knot-node-2" && !strings.Contains(p.output(), "notify, incoming, remote 127.0.0.1") {
			t.Errorf("%s: no NOTIFY logged:\n%s", p.id, p.output())
		}
		// The second zone of the catalog is served too.
		if r, _, err := p.ask("example.org.", dns.TypeSOA); err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
			t.Errorf("%s: example.org SOA: %v %v", p.id, r, err)
		}
	}
	// Every transfer went to a node's own address, never to 127.0.0.1.
	clients := map[string]int{}
	for _, m := range regexp.MustCompile(`Outgoing (?:noop, incremental )?transfer .* to (\S+) for`).FindAllStringSubmatch(s.output(), -1) {
		clients[m[1]]++
	}
	if clients["127.0.0.2"] == 0 || clients["127.0.0.3"] == 0 || clients["127.0.0.1"] != 0 {
		t.Errorf("transfers by client address: %v, want 127.0.0.2 and 127.0.0.3 only", clients)
	}
	t.Logf("transfers by client address: %v", clients)
}
