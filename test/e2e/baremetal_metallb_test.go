//go:build e2e

package e2e

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"
)

// lbServiceYAML is a LoadBalancer Service of the stage's class with the
// given annotations (YAML flow mapping entries) and port.
func lbServiceYAML(ns, name, annotations string, port int) string {
	return fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata:
  name: %s
  namespace: %s
  annotations: {%s}
spec:
  type: LoadBalancer
  loadBalancerClass: %s
  ports: [{name: p, port: %d}]
`, name, ns, annotations, lbClass, port)
}

// testMetalLB: Services get their addresses from MetalLB only: one from the
// pool, one it asks for, two that share one (sharing key), a pool that runs
// out, and an address that moves from one Service to another.
func (bm *bareMetal) testMetalLB(t *testing.T) {
	ns := bm.ns
	kubectl(t, lbServiceYAML(ns, "auto", "", 80)+
		lbServiceYAML(ns, "requested", "metallb.universe.tf/loadBalancerIPs: 192.0.2.21", 80)+
		lbServiceYAML(ns, "shared-a", "metallb.universe.tf/loadBalancerIPs: 192.0.2.20, metallb.universe.tf/allow-shared-ip: web", 80)+
		lbServiceYAML(ns, "shared-b", "metallb.universe.tf/loadBalancerIPs: 192.0.2.20, metallb.universe.tf/allow-shared-ip: web", 443),
		"apply", "-f", "-")

	auto := waitLB(t, ns, "auto", bm.metallb)
	if a, err := netip.ParseAddr(auto); err != nil || !netip.MustParsePrefix("192.0.2.0/26").Contains(a) {
		t.Errorf("auto got %q, want an address of the pool apps", auto)
	}
	bm.atResolver(t, bm.name("auto"), "A", auto)
	bm.atResolver(t, bm.name("auto"), "AAAA") // a single-stack IPv4 Service
	bm.atResolver(t, bm.name("requested"), "A", "192.0.2.21")
	for _, s := range []string{"shared-a", "shared-b"} {
		if got := waitLB(t, ns, s, bm.metallb); got != "192.0.2.20" {
			t.Errorf("%s got %q, want the shared 192.0.2.20", s, got)
		}
		bm.atResolver(t, bm.name(s), "A", "192.0.2.20")
	}

	t.Run("pool-runs-out", func(t *testing.T) {
		kubectl(t, lbServiceYAML(ns, "tiny-1", "metallb.universe.tf/address-pool: tiny", 80), "apply", "-f", "-")
		if got := waitLB(t, ns, "tiny-1", bm.metallb); got != "192.0.2.250" {
			t.Fatalf("tiny-1 got %q, want 192.0.2.250", got)
		}
		before := len(bm.plugin.output())
		kubectl(t, lbServiceYAML(ns, "tiny-2", "metallb.universe.tf/address-pool: tiny", 80), "apply", "-f", "-")
		// MetalLB says why it gives none, on the Service.
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(kubectl(t, "", "-n", ns, "get", "events", "--field-selector", "involvedObject.name=tiny-2", "-o", "jsonpath={.items[*].reason}"), "AllocationFailed") {
			if time.Now().After(deadline) {
				t.Fatalf("MetalLB reported no AllocationFailed for tiny-2:\n%s", bm.metallb.output())
			}
			time.Sleep(200 * time.Millisecond)
		}
		if got := lbAddresses(t, ns, "tiny-2"); got != "" {
			t.Fatalf("tiny-2 got %q from a pool of one address", got)
		}
		// Nothing published, validated as absent, and the plugin stays
		// quiet about a Service without an address.
		bm.atResolver(t, bm.name("tiny-2"), "A")
		bm.atResolver(t, bm.name("tiny-1"), "A", "192.0.2.250")
		time.Sleep(2 * time.Second)
		// The chart's Corefile logs queries (the log plugin): those lines
		// do not count.
		queryLog := regexp.MustCompile(`^\[INFO\] [0-9.:]+ - [0-9]+ "`)
		var logged []string
		for _, line := range strings.Split(bm.plugin.output()[before:], "\n") {
			if line != "" && !queryLog.MatchString(line) {
				logged = append(logged, line)
			}
		}
		if len(logged) > 0 {
			t.Errorf("the plugin logged while a Service had no address:\n%s", strings.Join(logged, "\n"))
		}
	})

	t.Run("address-moves", func(t *testing.T) {
		kubectl(t, lbServiceYAML(ns, "mover", "metallb.universe.tf/loadBalancerIPs: 192.0.2.22", 80), "apply", "-f", "-")
		bm.atResolver(t, bm.name("mover"), "A", "192.0.2.22")
		// mover gives 192.0.2.22 up, then taker asks for it.
		kubectl(t, lbServiceYAML(ns, "mover", "metallb.universe.tf/loadBalancerIPs: 192.0.2.23", 80), "apply", "-f", "-")
		bm.atResolver(t, bm.name("mover"), "A", "192.0.2.23")
		kubectl(t, lbServiceYAML(ns, "taker", "metallb.universe.tf/loadBalancerIPs: 192.0.2.22", 80), "apply", "-f", "-")
		bm.atResolver(t, bm.name("taker"), "A", "192.0.2.22")
		bm.atResolver(t, bm.name("mover"), "A", "192.0.2.23")
	})
}
