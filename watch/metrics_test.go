package watch

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// kindSeries returns the kind_enabled series of zone: "kind version", or
// "kind/namespace version" for an informer of one namespace, and " reason"
// when it has one → value.
func kindSeries(t *testing.T, zone string) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 100)
	kindEnabled.Collect(ch)
	close(ch)
	out := map[string]float64{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		l := map[string]string{}
		for _, p := range d.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["zone"] == zone {
			kind := l["kind"]
			if l["namespace"] != "" {
				kind += "/" + l["namespace"]
			}
			key := kind + " " + l["version"]
			if l["reason"] != "" {
				key += " " + l["reason"]
			}
			out[key] = d.GetGauge().GetValue()
		}
	}
	return out
}

// TestKindMetrics: kind_enabled says which kinds run, at which version, and
// which are disabled and why; the nameserver's own Service watch is not the
// Service kind; a kind read at a new version, or off for another reason,
// leaves no series of the old one.
func TestKindMetrics(t *testing.T) {
	svc := source.KindByName("Service")
	tcp := source.KindByName("TCPRoute")
	tcpOld := tcp.Older[0]
	for _, c := range []struct {
		desc              string
		running, disabled [][]*watched // successive calls
		want              map[string]float64
	}{
		{
			desc:     "kind enabled, nameserver watch disabled",
			running:  [][]*watched{{{Kind: svc, Version: svc}, {Kind: svc, Version: svc, nameserver: true}}},
			disabled: [][]*watched{{{Kind: svc, Version: svc, nameserver: true}}},
			want:     map[string]float64{"Service v1": 1},
		},
		{
			desc:     "kind disabled, nameserver watch enabled",
			running:  [][]*watched{{{Kind: svc, Version: svc, nameserver: true}}},
			disabled: [][]*watched{{{Kind: svc, Version: svc, off: offRefused}}},
			want:     map[string]float64{"Service  refused": 0},
		},
		{
			desc:     "older version",
			running:  [][]*watched{{{Kind: tcp, Version: tcpOld}}},
			disabled: [][]*watched{nil},
			want:     map[string]float64{"TCPRoute gateway.networking.k8s.io/v1alpha2": 1},
		},
		{
			desc:     "disabled, then enabled at an older version, then at a newer one",
			running:  [][]*watched{nil, {{Kind: tcp, Version: tcpOld}}, {{Kind: tcp, Version: tcp}}},
			disabled: [][]*watched{{{Kind: tcp, Version: tcp, off: offNotServed}}, nil, nil},
			want:     map[string]float64{"TCPRoute gateway.networking.k8s.io/v1": 1},
		},
		{
			desc:     "not served, then refused, then failing; no reason recorded is not enabled",
			running:  [][]*watched{nil, nil, nil, nil},
			disabled: [][]*watched{{{Kind: tcp, Version: tcp, off: offNotServed}}, {{Kind: tcp, Version: tcp, off: offRefused}}, {{Kind: tcp, Version: tcp, off: offFailing}}, {{Kind: tcp, Version: tcp}}},
			want:     map[string]float64{"TCPRoute  failing": 0},
		},
		{
			desc:     "per namespace: one forbidden, the other at a new version",
			running:  [][]*watched{{{Kind: tcp, Version: tcpOld, Namespace: "a"}}, {{Kind: tcp, Version: tcp, Namespace: "a"}}},
			disabled: [][]*watched{{{Kind: tcp, Version: tcp, Namespace: "b", off: offRefused}}, {{Kind: tcp, Version: tcp, Namespace: "b", off: offRefused}}},
			want:     map[string]float64{"TCPRoute/a gateway.networking.k8s.io/v1": 1, "TCPRoute/b  refused": 0},
		},
	} {
		zone := strings.NewReplacer(" ", "-", ",", "").Replace("metrics-" + c.desc + ".")
		for i := range c.running {
			setKindMetrics(zone, c.running[i], c.disabled[i])
		}
		if got := kindSeries(t, zone); !maps.Equal(got, c.want) {
			t.Errorf("%s: kind_enabled = %v, want %v", c.desc, got, c.want)
		}
	}
}

// TestKindOffReason: why a kind is off, from the error that disabled it or
// that its running informer's guard reported: only a refusal and a failure
// are reasons to alert (docs/operations/alerts.md).
func TestKindOffReason(t *testing.T) {
	gr := schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "tlsroutes"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{notServedError(source.KindByName("TLSRoute")), offNotServed},
		{apierrors.NewNotFound(gr, ""), offNotServed},
		{apierrors.NewForbidden(gr, "", errors.New("RBAC")), offRefused},
		{apierrors.NewUnauthorized("token expired"), offRefused},
		{fmt.Errorf("%w: %v", errSlow, apierrors.NewTimeoutError("slow", 1)), offFailing},
		{apierrors.NewInternalError(errors.New("conversion webhook")), offFailing},
	} {
		if got := offReason(c.err); got != c.want {
			t.Errorf("offReason(%v) = %q, want %q", c.err, got, c.want)
		}
	}

	// A running informer's guard: refused, then its CRD gone, then allowed again.
	zone := "metrics-guard-changed."
	svc := source.KindByName("Service")
	c := &Controller{cfg: Config{ZonesLabel: zone}}
	w := &watched{Kind: svc, Version: svc}
	for _, step := range []struct {
		allowed bool
		err     error
		want    map[string]float64
	}{
		{false, apierrors.NewForbidden(gr, "", errors.New("RBAC")), map[string]float64{"Service v1 refused": 0}},
		{false, apierrors.NewNotFound(gr, ""), map[string]float64{"Service v1 not_served": 0}},
		{true, nil, map[string]float64{"Service v1": 1}},
	} {
		c.guardChanged(w)(step.allowed, step.err)
		if got := kindSeries(t, zone); !maps.Equal(got, step.want) {
			t.Errorf("after the guard's (%v, %v): kind_enabled = %v, want %v", step.allowed, step.err, got, step.want)
		}
	}
}

// histogramCount returns the sample count of coredns_k8s_gateway_<name>{kind}.
func histogramCount(t *testing.T, name, kind string) uint64 {
	t.Helper()
	return testutil.Gathered(t, name, "kind", kind).GetHistogram().GetSampleCount()
}

// TestProgrammingDuration: each change after the sync is one sample of
// programming_duration_seconds of its kind; the initial list is none.
func TestProgrammingDuration(t *testing.T) {
	client := fake.NewSimpleClientset(testutil.NamedIngress("default", "old", []string{"old.example.com"}, "192.0.2.9"))
	before := histogramCount(t, "programming_duration_seconds", "Ingress")
	p := startPipeline(t, testConfig("example.com."), watchtest.API{Core: client})
	if n := histogramCount(t, "programming_duration_seconds", "Ingress"); n != before {
		t.Errorf("the initial sync observed %d samples, want none", n-before)
	}
	create(t, client, testutil.NamedIngress("default", "web", []string{"www.example.com"}, "192.0.2.1"))
	p.answers(t, "www.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1"}))
	// Observed when the handler returns, just after the answer changed.
	testutil.Eventually(t, "one sample", func() string {
		if n := histogramCount(t, "programming_duration_seconds", "Ingress"); n != before+1 {
			return fmt.Sprintf("%d samples, want 1", n-before)
		}
		return ""
	})
}
