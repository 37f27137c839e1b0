package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// TestControllerListenerSetRefusalReported: a route published through a
// ListenerSet whose namespace is not delegated the name is refused before
// the index; the refusal is counted in rejected_total and told to the
// route's namespace in a DNSNameRejected Event, as the index's own
// rejections are.
func TestControllerListenerSetRefusalReported(t *testing.T) {
	ctx := context.Background()
	const zone, name = "example.com.", "shop.example.com."
	core := fake.NewClientset(k8sTenantNamespace("team-a", "shop.example.com"), k8sTenantNamespace("team-b", ""), k8sTenantNamespace("infra", ""))
	gw := testutil.AllowListeners(testutil.Gateway("infra", "shared", []string{"192.0.2.1"}), gwv1.NamespacesFromAll, nil)
	ls := testutil.ListenerSet("team-b", "ls", "infra", "shared", metav1.ConditionTrue, testutil.HTTPListener("web", "shop.example.com"))
	rt := testutil.NewRoute("HTTPRoute", []string{"shop.example.com"}, testutil.ListenerSetRef("team-b", "ls")).InNS("team-b").Object().(*gwv1.HTTPRoute)
	api := watchtest.NewVersionedAPI(watchtest.API{Core: core}, gwfake.NewSimpleClientset(),
		map[string][]string{"gateway.networking.k8s.io/v1": {"listenersets"}})
	if err := watchtest.CreateGatewayObjects(api.Gateways, gw, ls, rt); err != nil {
		t.Fatal(err)
	}
	rejected := func() float64 {
		var d dto.Metric
		if err := rejectedTotal.WithLabelValues(zone, index.ReasonUndelegated).Write(&d); err != nil {
			t.Fatal(err)
		}
		return d.GetCounter().GetValue()
	}
	before := rejected()
	g := k8sStartGatewayAPI(t, api, []string{zone}, func(g *Gateway) {
		g.resources = []string{"HTTPRoute"}
		g.ownership = index.Delegated
		g.emitEvents = true
	})
	k8sAnswers(t, g, name, dns.TypeA, k8sNX)
	testutil.Eventually(t, "the route's Event", func() string {
		list, err := core.CoreV1().Events("team-b").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, ev := range list.Items {
			if ev.Reason == "DNSNameRejected" && ev.InvolvedObject.Kind == "HTTPRoute" && ev.InvolvedObject.Name == rt.Name && strings.Contains(ev.Message, "shop.example.com") {
				return ""
			}
		}
		return fmt.Sprintf("no DNSNameRejected Event on HTTPRoute team-b/%s among %d", rt.Name, len(list.Items))
	})
	if got := rejected() - before; got != 1 {
		t.Errorf("rejected_total{reason=%q} counted %v, want 1", index.ReasonUndelegated, got)
	}
}
