//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// steeringOwnershipCorefile steers by weight and by the client's location
// (the test MMDB, %[1]s) under the ownership policy %[2]s.
const steeringOwnershipCorefile = `example.com:{$K8S_GATEWAY_PORT} {
    bind 127.0.0.1
    errors
    ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}
    metadata
    geoip %[1]s {
        edns-subnet
    }
    k8s_gateway example.com {
        kubeconfig {$KUBECONFIG}
        resources Service
        ttl 30
        ownership %[2]s
    }
}
`

// TestSteeringOwnership: weights and locations count only from the tenant
// that may publish a name. One tenant's two Services at a name, weights 1
// and 3, share its answers 1:3. Under union (the default) another tenant's
// Service there with a weight of 1000 and a location takes no more than
// union gives it: the name is no longer steered by annotations, and every
// answer holds all three addresses; once it goes, 1:3 again. Under first
// the other tenant's claim is rejected, and the owner's weights count with
// it present.
func TestSteeringOwnership(t *testing.T) {
	mmdb := testMMDB(t)
	owner, other := namespace(t), namespace(t)
	name := "shop." + owner + ".example.com."
	steeredService(t, kubeconfig, owner, "w1", name, "192.0.2.41", "k8s-gateway.dns/weight", "1")
	steeredService(t, kubeconfig, owner, "w3", name, "192.0.2.43", "k8s-gateway.dns/weight", "3")
	afterCreationSecond(t, owner, "service", "w3")
	const n = 2000
	ownerShares := func(s *server, subnet string) {
		t.Helper()
		counts := s.answerSets(t, name, subnet, n)
		withinShare(t, counts, n, "192.0.2.41", 1, 4)
		withinShare(t, counts, n, "192.0.2.43", 3, 4)
	}
	for _, policy := range []string{"union", "first"} {
		t.Run(policy, func(t *testing.T) {
			cf := filepath.Join(t.TempDir(), "Corefile")
			writeFile(t, cf, fmt.Sprintf(steeringOwnershipCorefile, mmdb, policy))
			rel, _ := filepath.Rel(repoRoot, cf)
			s := startServer(t, rel, kubeconfig)
			s.waitAnswerSet(t, name, "192.0.2.41")
			s.waitAnswerSet(t, name, "192.0.2.43")
			ownerShares(s, "")

			steeredService(t, kubeconfig, other, "thief", name, "192.0.2.66",
				"k8s-gateway.dns/weight", "1000", "k8s-gateway.dns/location", "continent=OC,country=AU")
			own := "thief." + other + ".example.com."
			s.eventually(t, 10*time.Second, own, dns.TypeA, positive(own+" 30 IN A 192.0.2.66"))
			if policy == "first" {
				// Rejected: the owner's weights steer, for every client.
				ownerShares(s, "")
				ownerShares(s, "192.0.2.0/24") // located in AU
			} else {
				all := "192.0.2.41 192.0.2.43 192.0.2.66"
				s.waitAnswerSet(t, name, all)
				for _, subnet := range []string{"", "192.0.2.0/24"} {
					if got := s.answerSets(t, name, subnet, n); got[all] != n {
						t.Errorf("client %q: answers %v, want every one %q", subnet, got, all)
					}
				}
			}
			kubectl(t, "", "-n", other, "delete", "service", "thief")
			s.eventually(t, 10*time.Second, own, dns.TypeA, nxdomain)
			ownerShares(s, "")
		})
	}
}

// answerSets asks name A n times over UDP, with an ECS option of subnet
// when not empty, and counts the answers by their addresses, sorted and
// joined by spaces.
func (s *server) answerSets(t *testing.T, name, subnet string, n int) map[string]int {
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
		var addrs []string
		for _, rr := range in.Answer {
			if a, ok := rr.(*dns.A); ok {
				addrs = append(addrs, a.A.String())
			}
		}
		slices.Sort(addrs)
		counts[strings.Join(addrs, " ")]++
	}
	return counts
}

// waitAnswerSet waits until an answer of name A is exactly the addresses
// want (sorted, joined by spaces).
func (s *server) waitAnswerSet(t *testing.T, name, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := s.answerSets(t, name, "", 50)
		if got[want] > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: answers %v, never %q", name, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
