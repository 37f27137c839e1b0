package fleet

import (
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// The fleet tests run clusters, each a controller on watchtest's fake API,
// that put their records into one real index, as the plugin's cluster
// blocks do, and ask the index as the plugin's ServeDNS would
// (watchtest.Answer).

// testTiming is the timing of the clusters' controllers: short waits, so
// that re-probes and retries happen within a test.
var testTiming = watch.Timing{
	StartupWait: 5 * time.Second, Reprobe: 50 * time.Millisecond,
	Guard: watch.GuardTiming{RetryInitial: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond, ThrottledMax: 20 * time.Millisecond},
}

// testHealth is how the tests' clusters watch their API servers.
var testHealth = HealthTiming{Every: 10 * time.Millisecond, UnreachableAfter: 200 * time.Millisecond}

// testConfig is the configuration of a cluster that publishes Services in
// zones with a TTL of 60, as the plugin's defaults do.
func testConfig(zones ...string) watch.Config {
	return watch.Config{
		Sources: source.Config{
			Zones: zones, TTL: 60, GatewaySelector: labels.Everything(), Addresses: &source.AddressFilter{},
		},
		Resources:  []string{"Service"},
		ZonesLabel: strings.Join(zones, " "),
		Timing:     testTiming,
	}
}

// testFleet is a fleet whose clusters publish into one index of zones.
type testFleet struct {
	Fleet
	zones []string
	ix    *index.Index
}

// newTestFleet returns a fleet without clusters publishing into an index of
// zones; its clusters stop when the test ends.
func newTestFleet(t testing.TB, zones ...string) *testFleet {
	t.Helper()
	ix := index.New(index.Config{
		Zones: zones,
		SOA: func(zone string, serial uint32) *dns.SOA {
			return &dns.SOA{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60},
				Ns: "ns." + zone, Mbox: "hostmaster." + zone, Serial: serial, Minttl: 60}
		},
	})
	tf := &testFleet{zones: zones, ix: ix}
	t.Cleanup(func() {
		tf.stop()
		ix.Close()
	})
	return tf
}

// join adds the cluster name that reads api with cfg (testConfig of the
// fleet's zones when nil).
func (tf *testFleet) join(name string, api watch.API, cfg *watch.Config) *Cluster {
	if cfg == nil {
		c := testConfig(tf.zones...)
		cfg = &c
	}
	cl := NewCluster(name, *cfg, api, tf.ix, false)
	tf.Add(cl)
	return cl
}

// start starts every cluster, waits until each has synced, and publishes
// the index, as the plugin does once it is ready.
func (tf *testFleet) start(t testing.TB) {
	t.Helper()
	tf.startClusters(t)
	for _, cl := range tf.List() {
		select {
		case <-cl.Controller.Synced():
		case <-time.After(10 * time.Second):
			t.Fatalf("cluster %s not synced after 10s", cl.Name)
		}
	}
	tf.ix.Flush()
}

// startClusters starts every cluster, without waiting.
func (tf *testFleet) startClusters(t testing.TB) {
	t.Helper()
	for _, cl := range tf.List() {
		if err := cl.Start(testHealth); err != nil {
			t.Fatal(err)
		}
	}
}

// stop stops the clusters and takes them out of the fleet.
func (tf *testFleet) stop() {
	for _, cl := range tf.List() {
		tf.remove(cl.Name)
		cl.Stop()
	}
}

// answers polls until the index answers name/qtype as want.
func (tf *testFleet) answers(t testing.TB, name string, qtype uint16, want string) {
	t.Helper()
	watchtest.Answers(t, tf.ix, name, qtype, want)
}

// create creates an Ingress or a Service in client.
func create(t testing.TB, client kubernetes.Interface, obj k8sruntime.Object) {
	t.Helper()
	if err := watchtest.Create(client, obj); err != nil {
		t.Fatalf("create: %v", err)
	}
}

// gauge returns the value of the gauge coredns_k8s_gateway_<name> of
// cluster as the plugin exports it, -1 when it has no such series.
func gauge(t testing.TB, name, cluster string) float64 {
	t.Helper()
	m := testutil.Gathered(t, name, "cluster", cluster)
	if m == nil {
		return -1
	}
	return m.GetGauge().GetValue()
}

// startPrimaryAndStandby starts a fleet of cluster a (priority 1) and
// cluster b (priority 2), each configured further by configure, which both
// publish web.example.com (a at 192.0.2.1, b at 192.0.2.2), and waits until
// the primary answers. It returns the fleet and the primary's and the
// standby's answers.
func startPrimaryAndStandby(t testing.TB, a, b kubernetes.Interface, configure func(*watch.Config)) (tf *testFleet, primary, standby string) {
	t.Helper()
	tf = newTestFleet(t, "example.com.")
	for i, client := range []kubernetes.Interface{a, b} {
		cfg := testConfig("example.com.")
		cfg.Priority = int32(i + 1)
		configure(&cfg)
		tf.join([]string{"a", "b"}[i], watchtest.API{Core: client}, &cfg)
	}
	tf.start(t)
	create(t, a, testutil.ClaimingService("apps", "web", 100, "web.example.com", "192.0.2.1"))
	create(t, b, testutil.ClaimingService("apps", "web", 200, "web.example.com", "192.0.2.2"))
	primary = watchtest.Expect(t, "NOERROR", []string{"web.example.com. 60 IN A 192.0.2.1"})
	standby = watchtest.Expect(t, "NOERROR", []string{"web.example.com. 60 IN A 192.0.2.2"})
	tf.answers(t, "web.example.com.", dns.TypeA, primary)
	return tf, primary, standby
}
