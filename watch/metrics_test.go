package watch

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// kindSeries returns the kind_enabled series of zone: "kind version", or
// "kind/namespace version" for an informer of one namespace → value.
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
			out[kind+" "+l["version"]] = d.GetGauge().GetValue()
		}
	}
	return out
}

// TestKindMetrics: kind_enabled says which kinds run, at which version, and
// which are disabled; the nameserver's own Service watch is not the Service
// kind; a kind read at a new version leaves no series of the old one.
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
			disabled: [][]*watched{{{Kind: svc, Version: svc}}},
			want:     map[string]float64{"Service ": 0},
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
			disabled: [][]*watched{{{Kind: tcp, Version: tcp}}, nil, nil},
			want:     map[string]float64{"TCPRoute gateway.networking.k8s.io/v1": 1},
		},
		{
			desc:     "per namespace: one forbidden, the other at a new version",
			running:  [][]*watched{{{Kind: tcp, Version: tcpOld, Namespace: "a"}}, {{Kind: tcp, Version: tcp, Namespace: "a"}}},
			disabled: [][]*watched{{{Kind: tcp, Version: tcp, Namespace: "b"}}, {{Kind: tcp, Version: tcp, Namespace: "b"}}},
			want:     map[string]float64{"TCPRoute/a gateway.networking.k8s.io/v1": 1, "TCPRoute/b ": 0},
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
