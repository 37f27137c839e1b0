package gateway

// Helpers of the tests that run the plugin on a controller (lifecycle_test.go,
// health_test.go, tenancy_test.go, setup_test.go, ...): a Gateway on
// watchtest's fake API, asked through ServeDNS. Names carry a k8s prefix so
// that they do not collide with the helpers of the lookup tests in the same
// package.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/persist"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// k8sAsk sends one query to g and returns the reply (nil when the plugin
// wrote none) and the rcode ServeDNS returned.
func k8sAsk(g *Gateway, name string, qtype uint16) (*dns.Msg, int, error) {
	req := new(dns.Msg)
	req.SetQuestion(dns.Fqdn(name), qtype)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	rcode, err := g.ServeDNS(context.Background(), rec, req)
	return rec.Msg, rcode, err
}

// k8sAnswer returns a one-line description of the reply to name/qtype: its
// rcode and answer and additional sections, for comparing with k8sExpect.
func k8sAnswer(g *Gateway, name string, qtype uint16) string {
	m, rcode, err := k8sAsk(g, name, qtype)
	if err != nil {
		return fmt.Sprintf("error %v (rcode %s)", err, dns.RcodeToString[rcode])
	}
	if m == nil {
		return "no reply, rcode " + dns.RcodeToString[rcode]
	}
	return k8sFormat(dns.RcodeToString[m.Rcode], testutil.Strings(m.Answer), testutil.Strings(m.Extra))
}

// k8sExpect builds what k8sAnswer returns for rcode, answer and additional records.
func k8sExpect(t testing.TB, rcode string, answer []string, extra ...string) string {
	t.Helper()
	return k8sFormat(rcode, testutil.Want(t, answer...), testutil.Want(t, extra...))
}

func k8sFormat(rcode string, answer, extra []string) string {
	return fmt.Sprintf("%s answer=[%s] extra=[%s]", rcode, strings.Join(answer, " | "), strings.Join(extra, " | "))
}

// k8sAnswers polls until g answers name/qtype as want.
func k8sAnswers(t testing.TB, g *Gateway, name string, qtype uint16, want string) {
	t.Helper()
	testutil.Eventually(t, name+" "+dns.TypeToString[qtype], func() string {
		if got := k8sAnswer(g, name, qtype); got != want {
			return "got " + got + ", want " + want
		}
		return ""
	})
}

// The fake's object tracker honours label selectors on lists but ignores field
// selectors, and ignores both on watches (see watchtest): the tests keep only
// the nameserver's Service in kube-system, and create the objects that a label
// selector must hide before the controller starts.

// k8sTiming is the timing of the controllers of the tests: short waits, so
// that re-probes and retries happen within a test.
var k8sTiming = timing{
	startupWait: 5 * time.Second, reprobe: 50 * time.Millisecond, clusterWait: time.Second,
	health: 10 * time.Millisecond, unreachableAfter: 200 * time.Millisecond,
	guard:   watch.GuardTiming{RetryInitial: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond, ThrottledMax: 20 * time.Millisecond},
	persist: persist.Timing{Interval: 10 * time.Millisecond, Refresh: time.Hour},
}

// k8sNewGateway configures a Gateway for zones, publishing Ingresses and
// Services unless configure says otherwise, and its controller on client.
func k8sNewGateway(client kubernetes.Interface, zones []string, configure func(*Gateway)) *Gateway {
	return k8sNewGatewayAPI(watchtest.API{Core: client}, zones, configure)
}

// k8sNewGatewayAPI is k8sNewGateway on any API.
func k8sNewGatewayAPI(api watch.API, zones []string, configure func(*Gateway)) *Gateway {
	g := newGateway()
	g.Zones = zones
	g.resources = []string{"Ingress", "Service"}
	g.timing = k8sTiming
	if configure != nil {
		configure(g)
	}
	g.buildIndex()
	g.fleet.Add(fleet.NewCluster("", g.controllerConfig(), api, g.index, g.emitEvents))
	return g
}

// k8sStartGateway is k8sNewGateway, then starts the controller, checks that
// it synced, and stops it when the test ends.
func k8sStartGateway(t *testing.T, client kubernetes.Interface, zones []string, configure func(*Gateway)) *Gateway {
	t.Helper()
	return k8sStartGatewayAPI(t, watchtest.API{Core: client}, zones, configure)
}

// k8sStartGatewayAPI is k8sStartGateway on any API.
func k8sStartGatewayAPI(t *testing.T, api watch.API, zones []string, configure func(*Gateway)) *Gateway {
	t.Helper()
	g := k8sNewGatewayAPI(api, zones, configure)
	t.Cleanup(g.stop)
	if err := g.start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	if !g.Ready() {
		t.Fatalf("not ready after start")
	}
	return g
}

func k8sCreate(t *testing.T, client kubernetes.Interface, obj k8sruntime.Object) {
	t.Helper()
	if err := watchtest.Create(client, obj); err != nil {
		t.Fatalf("create: %v", err)
	}
}

// k8sNX is what k8sAnswer gives for a name that does not exist.
const k8sNX = "NXDOMAIN answer=[] extra=[]"

// k8sTenantNamespace is a Namespace delegated domains (a comma-separated
// list) by its annotation, none when empty.
func k8sTenantNamespace(name, domains string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if domains != "" {
		ns.Annotations = map[string]string{source.DomainsAnnotation: domains}
	}
	return ns
}
