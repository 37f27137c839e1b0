package watch

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/miekg/dns"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

type nopSink struct{}

func (nopSink) UpdateClaim(string, index.Claim, []dns.RR) {}
func (nopSink) SetDomains(string, []string)               {}

// claimSink records the claims put, by key, and the domains set.
type claimSink struct {
	claims  map[string]index.Claim
	rrs     map[string][]dns.RR
	domains map[string][]string
}

func newClaimSink() *claimSink {
	return &claimSink{claims: map[string]index.Claim{}, rrs: map[string][]dns.RR{}, domains: map[string][]string{}}
}

func (r *claimSink) UpdateClaim(key string, claim index.Claim, rrs []dns.RR) {
	if rrs == nil {
		delete(r.claims, key)
		delete(r.rrs, key)
		return
	}
	r.claims[key], r.rrs[key] = claim, rrs
}
func (r *claimSink) SetDomains(namespace string, domains []string) {
	if domains == nil {
		delete(r.domains, namespace)
		return
	}
	r.domains[namespace] = domains
}

// TestHealthSliceCounts: a Service's health follows the slices that come,
// change and go, and only flips are reported.
func TestHealthSliceCounts(t *testing.T) {
	h := newHealth(&Config{Health: true}, nil, nopSink{})
	slice := func(name, service string, ready bool) *source.EndpointSlice {
		return source.NewEndpointSlice("ns", name, service, ready)
	}
	steps := []struct {
		desc           string
		old, cur       *source.EndpointSlice
		known, healthy bool
		flipped        []string
	}{
		{"no slices", nil, nil, false, true, nil},
		{"a slice without a ready endpoint", nil, slice("s1", "web", false), true, false, []string{"ns/web"}},
		{"a second, ready", nil, slice("s2", "web", true), true, true, []string{"ns/web"}},
		{"the second unready", slice("s2", "web", true), slice("s2", "web", false), true, false, []string{"ns/web"}},
		{"the first ready", slice("s1", "web", false), slice("s1", "web", true), true, true, []string{"ns/web"}},
		{"a slice of no Service", nil, slice("s9", "", false), true, true, nil},
		{"the second moves to another Service", slice("s2", "web", false), slice("s2", "db", false), true, true, []string{"ns/db"}},
		{"the first deleted: web has none left, unknown", slice("s1", "web", true), nil, false, true, nil},
		{"the second deleted", slice("s2", "db", false), nil, false, true, []string{"ns/db"}},
	}
	for _, s := range steps {
		flipped := h.slice(s.old, s.cur)
		if !slices.Equal(flipped, s.flipped) {
			t.Errorf("%s: flipped %q, want %q", s.desc, flipped, s.flipped)
		}
		if known, healthy := h.service("ns", "web"); known != s.known || healthy != s.healthy {
			t.Errorf("%s: web known %v healthy %v, want %v %v", s.desc, known, healthy, s.known, s.healthy)
		}
	}
	if len(h.services) != 0 {
		t.Errorf("counts left: %v", h.services)
	}
}

// TestHealthNote: the hook hears of flips only, by the key without the
// cluster's prefix, and a removed object is forgotten.
func TestHealthNote(t *testing.T) {
	h := newHealth(&Config{Health: true, Prefix: "east/"}, nil, nopSink{})
	var heard []string
	h.setHook(func(key string, unhealthy bool) { heard = append(heard, fmt.Sprintf("%s %v", key, unhealthy)) })
	for _, step := range []struct {
		desc               string
		unhealthy, removed bool
		want               []string
	}{
		{"published healthy: no flip", false, false, nil},
		{"unhealthy", true, false, []string{"Service/apps/web true"}},
		{"unhealthy again", true, false, nil},
		{"healthy again", false, false, []string{"Service/apps/web false"}},
		{"unhealthy", true, false, []string{"Service/apps/web true"}},
		{"removed: forgotten, nothing heard", false, true, nil},
		{"back unhealthy", true, false, []string{"Service/apps/web true"}},
	} {
		heard = nil
		h.note("east/Service/apps/web", step.unhealthy, step.removed)
		if !slices.Equal(heard, step.want) {
			t.Errorf("%s: heard %q, want %q", step.desc, heard, step.want)
		}
	}
}

// TestHealthMark: a LoadBalancer Service's claim is unhealthy while it has
// slices and none ready; a kind with backends (an Ingress) puts the records
// of unhealthy hosts under its unhealthy part, always unhealthy, and
// dropPart withdraws that part.
func TestHealthMark(t *testing.T) {
	out := newClaimSink()
	cfg := testConfig("example.com.")
	cfg.Health = true
	h := newHealth(&cfg, newStores(&cfg), out)
	svcKind, ingKind := source.KindByName("Service"), source.KindByName("Ingress")
	svc, err := testutil.ViaProtobuf[source.Service](testutil.NamedService("apps", "web", "192.0.2.1"))
	if err != nil {
		t.Fatal(err)
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "www"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{
			{Host: "up.example.com", IngressRuleValue: backendRule("db")},
			{Host: "down.example.com", IngressRuleValue: backendRule("web")},
		}},
		Status: testutil.IngressLB("192.0.2.2"),
	}
	ingObj, err := testutil.ViaProtobuf[source.Ingress](ing)
	if err != nil {
		t.Fatal(err)
	}
	a := func(name, addr string) dns.RR { return testutil.RR(name + " 60 IN A " + addr) }
	for _, tt := range []struct {
		desc      string
		slices    []*source.EndpointSlice // added before the mark
		w         *watched
		obj       any
		rrs       []dns.RR
		unhealthy bool
		kept      int
		part      int // records under the unhealthy part; -1: no part
	}{
		{"Service without slices: healthy", nil, &watched{Kind: svcKind, Version: svcKind}, svc, []dns.RR{a("web.example.com.", "192.0.2.1")}, false, 1, -1},
		{"Service with a slice, none ready", []*source.EndpointSlice{source.NewEndpointSlice("apps", "web-1", "web", false)},
			&watched{Kind: svcKind, Version: svcKind}, svc, []dns.RR{a("web.example.com.", "192.0.2.1")}, true, 1, -1},
		{"nameserver Service: never marked", nil, &watched{Kind: svcKind, Version: svcKind, nameserver: true}, svc, []dns.RR{a("web.example.com.", "192.0.2.1")}, false, 1, -1},
		{"Ingress: the host of the unhealthy backend apart", nil, &watched{Kind: ingKind, Version: ingKind}, ingObj,
			[]dns.RR{a("up.example.com.", "192.0.2.2"), a("down.example.com.", "192.0.2.2")}, false, 1, 1},
	} {
		for _, s := range tt.slices {
			h.slice(nil, s)
		}
		var claim index.Claim
		kept := h.mark(tt.w, "key", tt.obj, &claim, tt.rrs)
		if claim.Unhealthy != tt.unhealthy || len(kept) != tt.kept {
			t.Errorf("%s: unhealthy %v, kept %v; want %v, %d records", tt.desc, claim.Unhealthy, kept, tt.unhealthy, tt.kept)
		}
		part, ok := out.rrs["key"+unhealthyPart]
		if got := map[bool]int{true: len(part), false: -1}[ok]; got != tt.part {
			t.Errorf("%s: %d records in the unhealthy part, want %d", tt.desc, got, tt.part)
		}
		if ok && !out.claims["key"+unhealthyPart].Unhealthy {
			t.Errorf("%s: the unhealthy part's claim is not unhealthy", tt.desc)
		}
		h.dropPart(tt.w, "key")
		if _, ok := out.rrs["key"+unhealthyPart]; ok {
			t.Errorf("%s: the unhealthy part left after dropPart", tt.desc)
		}
	}
}

// backendRule is an Ingress rule with one path to the Service's port 80.
func backendRule(service string) networkingv1.IngressRuleValue {
	return networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
		Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: service, Port: networkingv1.ServiceBackendPort{Number: 80}}},
	}}}}
}

// BenchmarkHealthSliceEvent: the cost of one EndpointSlice event with
// 10,000 Services, each with two slices: an endpoint's change that leaves
// the Service healthy (the common case), and one that flips it (the
// Service's republish not included; see index's BenchmarkHealthFlip).
func BenchmarkHealthSliceEvent(b *testing.B) {
	const services = 10000
	c := New(Config{Health: true}, nil, nopSink{})
	w := &watched{Kind: source.EndpointSliceKind, Version: source.EndpointSliceKind}
	for i := range services {
		for j := range 2 {
			c.pub.sliceChanged(w, nil, source.NewEndpointSlice("ns", fmt.Sprintf("svc-%d-%d", i, j), fmt.Sprintf("svc-%d", i), true))
		}
	}
	b.Run("noflip", func(b *testing.B) {
		a := source.NewEndpointSlice("ns", "svc-7-0", "svc-7", true)
		n := source.NewEndpointSlice("ns", "svc-7-0", "svc-7", false)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%2 == 0 {
				c.pub.sliceChanged(w, a, n)
			} else {
				c.pub.sliceChanged(w, n, a)
			}
		}
	})
	b.Run("flip", func(b *testing.B) {
		a := source.NewEndpointSlice("ns", "one", "alone", true)
		n := source.NewEndpointSlice("ns", "one", "alone", false)
		c.pub.sliceChanged(w, nil, a)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%2 == 0 {
				c.pub.sliceChanged(w, a, n)
			} else {
				c.pub.sliceChanged(w, n, a)
			}
		}
	})
}

// BenchmarkHealthMemory reports the heap the health option keeps per
// Service: its counts, and its one EndpointSlice as the informer keeps it
// (decoded from the protobuf of a slice of 3 endpoints).
func BenchmarkHealthMemory(b *testing.B) {
	const services = 10000
	ready := true
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c := New(Config{Health: true}, nil, nopSink{})
		w := &watched{Kind: source.EndpointSliceKind, Version: source.EndpointSliceKind}
		store := make([]*source.EndpointSlice, 0, services)
		for i := range services {
			in := &discoveryv1.EndpointSlice{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("svc-%d-abcde", i), ResourceVersion: "123456",
					Labels: map[string]string{source.ServiceNameLabel: fmt.Sprintf("svc-%d", i), "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}},
				AddressType: discoveryv1.AddressTypeIPv4,
			}
			for j := range 3 {
				in.Endpoints = append(in.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.0.%d.%d", i%250, j)}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
			}
			pb, _ := in.Marshal()
			s := &source.EndpointSlice{}
			if err := s.Unmarshal(pb); err != nil {
				b.Fatal(err)
			}
			store = append(store, s)
			c.pub.sliceChanged(w, nil, s)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/services, "B/service")
		runtime.KeepAlive(store)
		runtime.KeepAlive(c)
	}
}
