package gateway

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestColdStartRefusalIsNotDenial: an API server whose authorizer is still
// warming up refuses every list (403) for a while. A kind that was never
// listed is retried through that, within the grace: the plugin is not
// ready and answers no NXDOMAIN for a name that exists, then the name.
func TestColdStartRefusalIsNotDenial(t *testing.T) {
	client := fake.NewSimpleClientset(
		testutil.NamedIngress("default", "web", []string{"www.example.com"}, "192.0.2.1"),
		testutil.NamedService("apps", "db", "192.0.2.20"),
	)
	var refusing atomic.Bool
	refusing.Store(true)
	client.PrependReactor("list", "*", func(a k8stesting.Action) (bool, k8sruntime.Object, error) {
		if refusing.Load() {
			gr := schema.GroupResource{Group: a.GetResource().Group, Resource: a.GetResource().Resource}
			return true, nil, apierrors.NewForbidden(gr, "", nil)
		}
		return false, nil, nil
	})
	g := k8sNewGateway(client, []string{"example.com."}, func(g *Gateway) {
		g.noStartupWait = true
		g.timing.refusalGrace = time.Minute
	})
	t.Cleanup(g.stop)
	if err := g.start(); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"www.example.com.": "192.0.2.1", "db.apps.example.com.": "192.0.2.20"}
	check := func() (answered int) {
		for name, addr := range names {
			got := k8sAnswer(g, name, dns.TypeA)
			switch {
			case strings.HasPrefix(got, "NXDOMAIN"), strings.HasPrefix(got, "NOERROR answer=[]"):
				t.Fatalf("%s denied while the API server refuses to list: %s (ready %v)", name, got, g.Ready())
			case got == k8sExpect(t, "NOERROR", []string{name + " 60 IN A " + addr}):
				answered++
			}
		}
		return answered
	}
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		check()
		if g.Ready() {
			t.Fatal("ready while every list is refused")
		}
	}
	refusing.Store(false)
	testutil.Eventually(t, "both names", func() string {
		if check() != len(names) || !g.Ready() {
			return "not yet"
		}
		return ""
	})
}
