package gateway

import (
	"testing"

	"github.com/coredns/caddy"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestWithdrawUnhealthyAlias: withdraw_unhealthy is the health option, in
// the block and in a cluster block, where it counts as set (not inherited).
func TestWithdrawUnhealthyAlias(t *testing.T) {
	kubeconfig := testutil.Kubeconfig(t)
	g, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n withdraw_unhealthy\n}"))
	if err != nil || !g.health {
		t.Fatalf("withdraw_unhealthy in the block: health %v, err %v", g != nil && g.health, err)
	}
	g, err = parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n cluster a {\n  kubeconfig "+kubeconfig+"\n  withdraw_unhealthy\n }\n}"))
	if err != nil {
		t.Fatal(err)
	}
	if o := g.clusters[0].resolved(g.clusterOptions); !o.health || !g.clusters[0].set["health"] {
		t.Errorf("withdraw_unhealthy in a cluster block: health %v, set %v", o.health, g.clusters[0].set)
	}
	if _, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n withdraw_unhealthy now\n}")); err == nil {
		t.Error("withdraw_unhealthy with an argument was accepted")
	}
}
