package watch

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/miekg/dns"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
)

type nopSink struct{}

func (nopSink) UpdateClaim(string, index.Claim, []dns.RR) {}
func (nopSink) SetDomains(string, []string)               {}

// TestSliceCounts: a Service's health follows the slices that come, change
// and go, and only flips are reported.
func TestSliceCounts(t *testing.T) {
	c := New(Config{Health: true}, nil, nopSink{})
	w := &watched{Kind: source.EndpointSliceKind, Version: source.EndpointSliceKind}
	slice := func(name string, ready bool) *source.EndpointSlice {
		return source.NewEndpointSlice("ns", name, "web", ready)
	}
	healthy := func() bool { _, h := c.serviceHealth("ns", "web"); return h }
	steps := []struct {
		desc     string
		old, cur *source.EndpointSlice
		healthy  bool
	}{
		{"no slices", nil, nil, true},
		{"a slice without a ready endpoint", nil, slice("s1", false), false},
		{"a second, ready", nil, slice("s2", true), true},
		{"the second unready", slice("s2", true), slice("s2", false), false},
		{"the first ready", slice("s1", false), slice("s1", true), true},
		{"the first deleted", slice("s1", true), nil, false},
		{"the second deleted: none left, unknown", slice("s2", false), nil, true},
	}
	for _, s := range steps {
		var old, cur any
		if s.old != nil {
			old = s.old
		}
		if s.cur != nil {
			cur = s.cur
		}
		c.sliceChanged(w, old, cur)
		if healthy() != s.healthy {
			t.Errorf("%s: healthy %v", s.desc, healthy())
		}
	}
	if len(c.health.services) != 0 {
		t.Errorf("counts left: %v", c.health.services)
	}
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
			c.sliceChanged(w, nil, source.NewEndpointSlice("ns", fmt.Sprintf("svc-%d-%d", i, j), fmt.Sprintf("svc-%d", i), true))
		}
	}
	b.Run("noflip", func(b *testing.B) {
		a := source.NewEndpointSlice("ns", "svc-7-0", "svc-7", true)
		n := source.NewEndpointSlice("ns", "svc-7-0", "svc-7", false)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%2 == 0 {
				c.sliceChanged(w, a, n)
			} else {
				c.sliceChanged(w, n, a)
			}
		}
	})
	b.Run("flip", func(b *testing.B) {
		a := source.NewEndpointSlice("ns", "one", "alone", true)
		n := source.NewEndpointSlice("ns", "one", "alone", false)
		c.sliceChanged(w, nil, a)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%2 == 0 {
				c.sliceChanged(w, a, n)
			} else {
				c.sliceChanged(w, n, a)
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
			c.sliceChanged(w, nil, s)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/services, "B/service")
		runtime.KeepAlive(store)
		runtime.KeepAlive(c)
	}
}
