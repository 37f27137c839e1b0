package watch

import (
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// The pipeline tests run a controller against a fake API (watchtest) and
// put its records into a real index: objects created in the fake reach the
// informers and the index's snapshot, which the tests ask as the plugin's
// ServeDNS would (pipeline.answer).

// testTiming is the timing of the controllers of the tests: short waits, so
// that re-probes and retries happen within a test.
var testTiming = Timing{
	StartupWait: 5 * time.Second, Reprobe: 50 * time.Millisecond,
	Guard: GuardTiming{RetryInitial: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond, ThrottledMax: 20 * time.Millisecond},
}

// testConfig is the configuration of a controller that publishes Ingresses
// and Services in zones with a TTL of 60, as the plugin's defaults do.
func testConfig(zones ...string) Config {
	return Config{
		Sources: source.Config{
			Zones: zones, TTL: 60, GatewaySelector: labels.Everything(), Addresses: &source.AddressFilter{},
		},
		Resources:  []string{"Ingress", "Service"},
		ZonesLabel: strings.Join(zones, " "),
		Timing:     testTiming,
	}
}

// pipeline is a controller that publishes into an index.
type pipeline struct {
	c  *Controller
	ix *index.Index
}

// newPipeline returns a controller of cfg on api that publishes into an
// index of cfg's zones (changed by opts), not started.
func newPipeline(t testing.TB, cfg Config, api API, opts ...func(*index.Config)) *pipeline {
	t.Helper()
	icfg := index.Config{
		Zones: cfg.Sources.Zones,
		SOA: func(zone string, serial uint32) *dns.SOA {
			return &dns.SOA{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60},
				Ns: "ns." + zone, Mbox: "hostmaster." + zone, Serial: serial, Minttl: 60}
		},
		Policy:  cfg.Ownership,
		Domains: cfg.Delegations,
	}
	for _, o := range opts {
		o(&icfg)
	}
	ix := index.New(icfg)
	t.Cleanup(ix.Close)
	return &pipeline{c: New(cfg, api, ix), ix: ix}
}

// start starts the controller, waits until it synced and publishes what it
// listed; the controller stops when the test ends.
func (p *pipeline) start(t testing.TB) {
	t.Helper()
	p.c.Start()
	t.Cleanup(p.c.Stop)
	select {
	case <-p.c.Synced():
	case <-time.After(10 * time.Second):
		t.Fatal("controller not synced after 10s")
	}
	p.ix.Flush()
}

// startPipeline is newPipeline, then start.
func startPipeline(t testing.TB, cfg Config, api API, opts ...func(*index.Config)) *pipeline {
	t.Helper()
	p := newPipeline(t, cfg, api, opts...)
	p.start(t)
	return p
}

// answer returns a one-line description of the index's answer to
// name/qtype, as the plugin would give it (watchtest.Answer).
func (p *pipeline) answer(name string, qtype uint16) string {
	return watchtest.Answer(p.ix, name, qtype)
}

// expect builds what answer returns for rcode, answer and additional records.
func expect(t testing.TB, rcode string, answer []string, extra ...string) string {
	t.Helper()
	return watchtest.Expect(t, rcode, answer, extra...)
}

// nx is what answer gives for a name that does not exist.
const nx = watchtest.NX

// answers polls until the index answers name/qtype as want.
func (p *pipeline) answers(t testing.TB, name string, qtype uint16, want string) {
	t.Helper()
	watchtest.Answers(t, p.ix, name, qtype, want)
}

// create creates an Ingress or a Service in client.
func create(t testing.TB, client kubernetes.Interface, obj k8sruntime.Object) {
	t.Helper()
	if err := watchtest.Create(client, obj); err != nil {
		t.Fatalf("create: %v", err)
	}
}
