package gateway

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/miekg/dns"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// TestReloadReleasesIndex: after a reload (a new block joins the shared
// informers, the old one stops), nothing that outlives the old block (the
// informers, their guards, the metrics) reaches it: its index is garbage
// collected.
func TestReloadReleasesIndex(t *testing.T) {
	client := fake.NewSimpleClientset(testutil.NamedIngress("default", "web", []string{"www.example.com"}, "192.0.2.1"))
	api := watchtest.API{Core: client, Share: "cluster-1"}
	www := "www.example.com."
	// Not k8sStartGatewayAPI: its cleanup would hold the old block.
	old := k8sNewGatewayAPI(api, []string{"example.com."}, nil)
	if err := old.start(); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, old, www, dns.TypeA, k8sExpect(t, "NOERROR", []string{www + " 60 IN A 192.0.2.1"}))
	oldIndex := weak.Make(old.index)
	g := k8sStartGatewayAPI(t, api, []string{"example.com."}, nil)
	old.stop()
	old = nil
	k8sAnswers(t, g, www, dns.TypeA, k8sExpect(t, "NOERROR", []string{www + " 60 IN A 192.0.2.1"}))
	deadline := time.Now().Add(5 * time.Second)
	for oldIndex.Value() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the old block's index is still reachable after the reload")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
