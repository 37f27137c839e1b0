//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// testTiming measures, and logs as "baremetal:" lines (docs/operations/benchmarks.md):
//
//   - from kubectl apply of an HTTPRoute to the plugin's answer, and to a
//     validated answer of a resolver whose cache is cold (a fresh unbound: the
//     delegation and the keys of com and example.com are fetched too);
//   - from MetalLB reassigning Traefik's address to the plugin's answer and
//     to the resolver's, which had the old answer cached: at most the
//     controllers' delay plus the ttl, since the resolver keeps an answer for
//     its TTL.
func (bm *bareMetal) testTiming(t *testing.T) {
	ns, ts := bm.ns, bm.traefik

	cold := startResolver(t, "unbound-cold", bm.parents)
	name := bm.name("timed")
	start := time.Now()
	kubectl(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: timed, namespace: %[1]s}
spec:
  parentRefs: [{name: gw-a}]
  hostnames: [timed.%[1]s.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
`, ns), "apply", "-f", "-")
	bm.atPlugin(t, name, "A", ts.addrA)
	toPlugin := time.Since(start)
	waitAnswer(t, "cold resolver", "127.0.0.1", cold.port, name, "A", true, 20*time.Second, ts.addrA)
	toResolver := time.Since(start)
	t.Logf("baremetal: kubectl apply of an HTTPRoute -> the plugin answers: %s; -> validated answer at a cold resolver: %s",
		toPlugin.Round(time.Millisecond), toResolver.Round(time.Millisecond))

	// The resolver holds the answer for http, then MetalLB moves Traefik's
	// Service to another address.
	http := bm.name("http")
	if a, err := ask("127.0.0.1", bm.unbound.port, http, "A"); err != nil || !a.AD || !slices.Equal(a.Data, []string{ts.addrA}) {
		t.Fatalf("resolver, %s A: %+v %v, want %s validated", http, a, err, ts.addrA)
	}
	const moved = "192.0.2.11"
	kubectl(t, "", "-n", ns, "annotate", "--overwrite", "service", "traefik", "metallb.universe.tf/loadBalancerIPs="+moved)
	start = time.Now()
	var atPlugin, atResolver time.Duration
	for atPlugin == 0 || atResolver == 0 {
		if time.Since(start) > 60*time.Second {
			t.Fatalf("after 60s: plugin %s, resolver %s (0: not yet %s)\nmetallb:\n%s\ntraefik-a:\n%s", atPlugin, atResolver, moved, bm.metallb.output(), ts.a.output())
		}
		if a, err := ask(bm.dnsAddr, 53, http, "A"); atPlugin == 0 && err == nil && slices.Equal(a.Data, []string{moved}) {
			atPlugin = time.Since(start)
		}
		if a, err := ask("127.0.0.1", bm.unbound.port, http, "A"); atResolver == 0 && err == nil && a.AD && slices.Equal(a.Data, []string{moved}) {
			atResolver = time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("baremetal: MetalLB moves Traefik's address -> the plugin answers it: %s; -> the resolver (old answer cached, ttl %ds): %s",
		atPlugin.Round(time.Millisecond), bareMetalTTL, atResolver.Round(time.Millisecond))
	if bound := atPlugin + bareMetalTTL*time.Second + time.Second; atResolver > bound {
		t.Errorf("the resolver saw the new address after %s, more than the plugin's %s plus the TTL", atResolver, atPlugin)
	}
	// The Ingress follows the published Service too.
	bm.atResolver(t, bm.name("ing"), "A", moved)
}
