package gateway

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/caddy/caddyfile"
	"github.com/miekg/dns"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/acmeupdate"
	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// The keys of the ownership tests: one per namespace.
var updKeys = map[string]string{
	"team-a": "c2VjcmV0LW9mLXRlYW0tYS0zMi1ieXRlcy1sb25nISE=",
	"team-b": "c2VjcmV0LW9mLXRlYW0tYi0zMi1ieXRlcy1sb25nISE=",
}

// updGateway returns a gateway of example.com. on client with the updates
// option (a key per namespace of updKeys), configured by configure, not
// started.
func updGateway(t *testing.T, client kubernetes.Interface, configure func(*Gateway)) *Gateway {
	t.Helper()
	g := k8sNewGateway(client, []string{"example.com."}, func(g *Gateway) {
		g.ownership = index.First
		g.updates.opts = acmeupdate.NewOptions()
		for ns, secret := range updKeys {
			k, err := acmeupdate.NewKey(ns+".", "hmac-sha256", secret, ns, "Corefile")
			if err != nil {
				t.Fatal(err)
			}
			g.updates.opts.Keys = append(g.updates.opts.Keys, k)
		}
		g.updates.opts.Listen = "127.0.0.1:0"
		if configure != nil {
			configure(g)
		}
	})
	api := func(string, string) (watch.API, error) { return watchtest.API{Core: client}, nil }
	var err error
	if g.updates.owners, err = newOwnerView(g, api); err != nil {
		t.Fatal(err)
	}
	g.updates.service = newUpdateService(g)
	gvr := schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}
	g.updates.service.StartClient(dynfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "DNSEndpointList"}))
	if err := g.updates.service.Listen(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.updates.service.Stop)
	return g
}

// updStart starts g (and its owner view) until the test ends.
func updStart(t *testing.T, g *Gateway) {
	t.Helper()
	t.Cleanup(g.stop)
	if err := g.start(); err != nil {
		t.Fatal(err)
	}
	if v := g.updates.owners; v != nil {
		v.start(fleet.HealthTiming{})
		t.Cleanup(func() { v.stop(); v.index.Close() })
	}
}

// updChallenge sends namespace's signed update adding a value at
// _acme-challenge.<name> and returns the reply's rcode.
func updChallenge(t *testing.T, g *Gateway, namespace, name string) int {
	t.Helper()
	return updChallengeIn(t, g, "example.com.", namespace, name)
}

// updChallengeIn is updChallenge through an update that names zone.
func updChallengeIn(t *testing.T, g *Gateway, zone, namespace, name string) int {
	t.Helper()
	m := new(dns.Msg)
	m.SetUpdate(zone)
	m.Id = dns.Id()
	rr, err := dns.NewRR("_acme-challenge." + name + " 60 IN TXT \"token\"")
	if err != nil {
		t.Fatal(err)
	}
	m.Insert([]dns.RR{rr})
	m.SetTsig(namespace+".", dns.HmacSHA256, 300, time.Now().Unix())
	c := &dns.Client{Net: "tcp", TsigSecret: map[string]string{namespace + ".": updKeys[namespace]}}
	reply, _, err := c.Exchange(m, g.updates.service.Addr())
	if err != nil {
		t.Fatal(err)
	}
	return reply.Rcode
}

// updWant checks the rcode of namespace's challenge at name.
func updWant(t *testing.T, g *Gateway, what, namespace, name string, want int) {
	t.Helper()
	if got := updChallenge(t, g, namespace, name); got != want {
		t.Errorf("%s: %s's challenge at %s: %s, want %s", what, namespace, name, dns.RcodeToString[got], dns.RcodeToString[want])
	}
}

// TestUpdateOwnershipFailsClosed: while a kind the ownership decision reads
// is refused by the API server, or before the first sync (as with persist,
// which is Ready before it), another tenant's name would look free: no
// update is accepted (SERVFAIL) until everything is read.
func TestUpdateOwnershipFailsClosed(t *testing.T) {
	client := fake.NewSimpleClientset(testutil.NamedIngress("team-a", "web", []string{"www.a.example.com"}, "192.0.2.1"))
	var forbidden atomic.Bool
	forbidden.Store(true)
	client.PrependReactor("list", "ingresses", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		if !forbidden.Load() {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, "", errors.New("RBAC: not allowed"))
	})
	g := updGateway(t, client, nil)
	g.ready.Store(true) // ready from a persisted copy, before the informers list
	updWant(t, g, "before the first sync", "team-b", "www.a.example.com.", dns.RcodeServerFailure)
	updStart(t, g)
	updWant(t, g, "Ingresses forbidden", "team-b", "www.a.example.com.", dns.RcodeServerFailure)
	updWant(t, g, "Ingresses forbidden, a free name", "team-b", "free.example.com.", dns.RcodeServerFailure)
	forbidden.Store(false)
	testutil.Eventually(t, "Ingresses read", func() string {
		if ok, why := (&updateAuthorizer{g: g}).Complete(); !ok {
			return why
		}
		return ""
	})
	updWant(t, g, "everything read", "team-b", "www.a.example.com.", dns.RcodeRefused)
	updWant(t, g, "everything read", "team-a", "www.a.example.com.", dns.RcodeSuccess)
	updWant(t, g, "everything read, a free name", "team-b", "free.example.com.", dns.RcodeSuccess)
}

// TestUpdateOwnershipUnfiltered: a block's filters (address exclude,
// namespaces, labels, classes) or its resources hide a name from its view,
// but the challenge is served in every view: ownership is decided on what
// the cluster publishes to any block, so the name never looks free.
func TestUpdateOwnershipUnfiltered(t *testing.T) {
	internal := testutil.NamedService("team-a", "internal", "10.1.2.3")
	internal.Labels = map[string]string{"expose": "internal"}
	cases := []struct {
		name      string
		configure func(g *Gateway)
	}{
		{"exclude", func(g *Gateway) { g.addresses.Exclude = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} }},
		{"namespaces", func(g *Gateway) { g.namespaces = []string{"team-b"} }},
		{"serviceLabelSelectors", func(g *Gateway) { g.labelSelectors = map[string][]string{"Service": {"expose=public"}} }},
		// The block reads no Services; another block of the Corefile does
		// (recordKinds), and serves the challenge too.
		{"resources", func(g *Gateway) {
			g.resources = []string{"Ingress"}
			g.updates.kinds = map[string]map[string]bool{"": {"Ingress": true, "Service": true}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client := fake.NewSimpleClientset(internal.DeepCopy())
			g := updGateway(t, client, c.configure)
			updStart(t, g)
			if got := k8sAnswer(g, "internal.team-a.example.com.", dns.TypeA); got != k8sNX {
				t.Fatalf("the view shows the name: %s", got)
			}
			testutil.Eventually(t, "complete", func() string {
				if ok, why := (&updateAuthorizer{g: g}).Complete(); !ok {
					return why
				}
				return ""
			})
			updWant(t, g, c.name, "team-b", "internal.team-a.example.com.", dns.RcodeRefused)
			updWant(t, g, c.name, "team-a", "internal.team-a.example.com.", dns.RcodeSuccess)
		})
	}
}

// TestUpdateNameserverNames: a challenge at a nameserver name would give a
// certificate for the DNS server's own name; it is refused under every
// policy, even when no object publishes the name.
func TestUpdateNameserverNames(t *testing.T) {
	for _, policy := range []index.Policy{index.Union, index.First, index.Delegated} {
		client := fake.NewSimpleClientset()
		g := updGateway(t, client, func(g *Gateway) {
			g.ownership = policy
			g.apex = "ns1.example.com."
			g.secondary = "dns2.kube-system"
			g.delegations = map[string][]string{"team-a": {"example.com."}}
		})
		updStart(t, g)
		testutil.Eventually(t, "complete", func() string {
			if ok, why := (&updateAuthorizer{g: g}).Complete(); !ok {
				return why
			}
			return ""
		})
		updWant(t, g, policy.String(), "team-a", "ns1.example.com.", dns.RcodeRefused)
		updWant(t, g, policy.String(), "team-a", "dns2.kube-system.example.com.", dns.RcodeRefused)
		updWant(t, g, policy.String(), "team-a", "www.example.com.", dns.RcodeSuccess)
		g.stop()
	}
}

// TestUpdateNestedZoneApex: the apex of a zone nested in the block's zone
// (given with the zones, or made by cluster_zones) and the names above it
// are the server's, whichever zone the update names: an update of the
// outer zone cannot reach them. With an absolute apex no nameserver name
// covers them.
func TestUpdateNestedZoneApex(t *testing.T) {
	for _, c := range []struct {
		name      string
		configure func(g *Gateway)
		nested    string
	}{
		{"nested zone", func(g *Gateway) { g.Zones = []string{"example.com.", "sub.example.com."} }, "sub.example.com."},
		{"cluster_zones", func(g *Gateway) {
			g.Zones = []string{"example.com.", "a.b.example.com."} // a cluster block's subdomain a.b
			g.clusterZones, g.ownZones = true, 1
		}, "a.b.example.com."},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := updGateway(t, fake.NewSimpleClientset(), func(g *Gateway) {
				c.configure(g)
				g.apex, g.secondary = "ns1.example.net.", "ns2.example.net."
			})
			updStart(t, g)
			testutil.Eventually(t, "complete", func() string {
				if ok, why := (&updateAuthorizer{g: g}).Complete(); !ok {
					return why
				}
				return ""
			})
			above := strings.SplitN(c.nested, ".", 2)[1]
			for _, zone := range []string{"example.com.", c.nested} {
				if got := updChallengeIn(t, g, zone, "team-a", c.nested); got != dns.RcodeRefused {
					t.Errorf("update of %s: the challenge of the nested apex %s: %s, want REFUSED", zone, c.nested, dns.RcodeToString[got])
				}
				if got := updChallengeIn(t, g, zone, "team-a", "www."+c.nested); got != dns.RcodeSuccess {
					t.Errorf("update of %s: a challenge below the nested apex: %s", zone, dns.RcodeToString[got])
				}
			}
			if above != "example.com." {
				updWant(t, g, "above the nested apex", "team-a", above, dns.RcodeRefused)
			}
			updWant(t, g, "a free name of the outer zone", "team-a", "free.example.com.", dns.RcodeSuccess)
		})
	}
}

// TestUpdatesLocalCluster: with cluster blocks, the updates block names the
// cluster of the keys' Secrets and the challenges; a configuration where
// they could live in different clusters is refused, naming the line.
func TestUpdatesLocalCluster(t *testing.T) {
	kc := testutil.Kubeconfig(t)
	clusters := " cluster one {\n  kubeconfig " + kc + "\n }\n cluster two {\n  kubeconfig " + kc + "\n  resources Service\n }\n"
	cases := []struct {
		name, updates string
		err           []string
	}{
		{"not named", " updates {\n  secrets\n  listen 127.0.0.1:0\n }\n", []string{"Testfile:9", "cluster NAME"}},
		{"unknown", " updates {\n  secrets\n  cluster three\n  listen 127.0.0.1:0\n }\n", []string{"Testfile:11", "no cluster block"}},
		{"without DNSEndpoints", " updates {\n  secrets\n  cluster two\n  listen 127.0.0.1:0\n }\n", []string{"Testfile:9", "DNSEndpoint"}},
		{"named", " updates {\n  secrets\n  cluster one\n  listen 127.0.0.1:0\n }\n", nil},
	}
	for _, c := range cases {
		ctl := caddy.NewTestController("dns", "k8s_gateway example.com {\n"+clusters+c.updates+"}")
		err := setup(ctl)
		if c.err == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		for _, want := range c.err {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %v, want %q", c.name, err, want)
			}
		}
	}
	ctl := caddy.NewTestController("dns", "k8s_gateway example.com {\n updates {\n  secrets\n  cluster one\n  listen 127.0.0.1:0\n }\n}")
	if err := setup(ctl); err == nil || !strings.Contains(err.Error(), "Testfile:4") {
		t.Errorf("a cluster line without cluster blocks: %v", err)
	}
}

// TestUpdateOwnershipUnreachableCluster: a cluster block whose API server
// stops answering keeps its last known records, but its new names are not
// seen: no update is accepted until it answers again.
func TestUpdateOwnershipUnreachableCluster(t *testing.T) {
	remote := fake.NewSimpleClientset()
	var down atomic.Bool
	remote.PrependReactor("list", "*", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		if down.Load() {
			return true, nil, apierrors.NewServiceUnavailable("the API server is away")
		}
		return false, nil, nil
	})
	g := updGateway(t, fake.NewSimpleClientset(), func(g *Gateway) { g.timing.unreachableAfter = 300 * time.Millisecond })
	g.fleet.Add(fleet.NewCluster("remote", g.controllerConfig(), watchtest.API{Core: remote}, g.index, false))
	updStart(t, g)
	complete := func() string {
		if ok, why := (&updateAuthorizer{g: g}).Complete(); !ok {
			return why
		}
		return ""
	}
	testutil.Eventually(t, "complete", complete)
	updWant(t, g, "both clusters answer", "team-b", "free.example.com.", dns.RcodeSuccess)
	down.Store(true)
	testutil.Eventually(t, "the remote cluster unreachable", func() string {
		if complete() == "" {
			return "still complete"
		}
		return ""
	})
	updWant(t, g, "the remote cluster unreachable", "team-b", "free2.example.com.", dns.RcodeServerFailure)
	down.Store(false)
	testutil.Eventually(t, "complete again", complete)
	updWant(t, g, "the remote cluster answers again", "team-b", "free2.example.com.", dns.RcodeSuccess)
}

// TestOwnerKinds: the owner view of a block reads every kind that a block
// of the Corefile publishes from the same cluster, whichever comes first;
// another cluster's blocks add nothing.
func TestOwnerKinds(t *testing.T) {
	kc, other := testutil.Kubeconfig(t), testutil.Kubeconfig(t)
	c := caddy.NewTestController("dns", "k8s_gateway example.com {\n kubeconfig "+kc+"\n resources DNSEndpoint\n ownership first\n}")
	g := parseCase(t, c, nil)
	for _, block := range []string{
		"k8s_gateway example.com {\n kubeconfig " + kc + "\n resources Ingress Service\n}",
		"k8s_gateway example.com {\n kubeconfig " + other + "\n resources HTTPRoute\n}",
	} {
		c.Dispenser = caddyfile.NewDispenser("Testfile", strings.NewReader(block))
		parseCase(t, c, nil)
	}
	if !g.viewFilters() {
		t.Error("the block reads fewer kinds than the Corefile publishes, and has no owner view")
	}
	if got, want := g.ownerOptions(g.clusterOptions).resources, []string{"DNSEndpoint", "Ingress", "Service"}; !slices.Equal(got, want) {
		t.Errorf("the owner view reads %q, want %q", got, want)
	}
}
