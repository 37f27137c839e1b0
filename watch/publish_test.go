package watch

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// newTestPublisher returns the event path of cfg, synced, into out, and the
// informer of Services it handles (not run).
func newTestPublisher(cfg *Config, out Sink) (*publisher, *watched) {
	s := newStores(cfg)
	synced := make(chan struct{})
	close(synced)
	p := newPublisher(cfg, out, s, newHealth(cfg, s, out), synced)
	k := source.KindByName("Service")
	w := &watched{
		Kind: k, Version: k,
		key:     func(o metav1.Object) string { return "Service/" + o.GetNamespace() + "/" + o.GetName() },
		records: func(obj any) source.Result { return k.Records(obj, &cfg.Sources, s) },
	}
	return p, w
}

// slimService is a Service as its informer decodes it.
func slimService(t testing.TB, svc *corev1.Service) *source.Service {
	t.Helper()
	out, err := testutil.ViaProtobuf[source.Service](svc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPublisherClaims: an object's records reach the sink under its key,
// with the claim the configuration and its annotations give them, or not at
// all outside the namespaces option.
func TestPublisherClaims(t *testing.T) {
	created := time.Unix(1700000000, 0)
	svc := func(annotations ...string) *corev1.Service {
		s := testutil.AnnotateService(testutil.NamedService("apps", "web", "192.0.2.1"), annotations...)
		s.CreationTimestamp = metav1.NewTime(created)
		return s
	}
	tenant := index.Claim{Namespace: "apps", Created: created.UnixNano()}
	with := func(f func(*index.Claim)) index.Claim { c := tenant; f(&c); return c }
	for _, tt := range []struct {
		name      string
		configure func(*Config)
		svc       *corev1.Service
		want      *index.Claim // nil: nothing published
		rrs       int
	}{
		{"a tenant's Service", func(*Config) {}, svc(), &tenant, 1},
		{"outside the namespaces option", func(c *Config) { c.Namespaces = []string{"other"} }, svc(), nil, 0},
		{"within the namespaces option", func(c *Config) { c.Namespaces = []string{"other", "apps"} }, svc(), &tenant, 1},
		{"the cluster's priority, weight and location", func(c *Config) {
			c.Priority, c.Weight, c.Location = 2, 3, index.Location{Region: "eu"}
		}, svc(), ptr(with(func(c *index.Claim) {
			c.Priority, c.Weight, c.Location = 2, 3, index.Location{Region: "eu"}
			c.ClusterWeight, c.ClusterLocation = 3, index.Location{Region: "eu"}
		})), 1},
		{"the object's weight times the cluster's, its location first", func(c *Config) {
			c.Weight, c.Location = 3, index.Location{Region: "eu"}
		}, svc(source.WeightAnnotation, "5", source.LocationAnnotation, "region=us"),
			ptr(with(func(c *index.Claim) {
				c.Weight, c.Location = 15, index.Location{Region: "US"}
				c.ClusterWeight, c.ClusterLocation = 3, index.Location{Region: "eu"} // at a name shared with another tenant
			})), 1},
		{"the nameserver's own Service is the plugin's", func(c *Config) {
			c.Nameservers, c.Priority = []string{"apps/web"}, 2
		}, svc(), &index.Claim{}, 1},
		{"reverse zones: with its PTR", func(c *Config) { c.Reverse = true }, svc(), &tenant, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig("example.com.")
			tt.configure(&cfg)
			out := newClaimSink()
			p, w := newTestPublisher(&cfg, out)
			p.update(w, slimService(t, tt.svc))
			claim, ok := out.claims["Service/apps/web"]
			switch {
			case tt.want == nil && ok:
				t.Fatalf("published %v under %+v", out.rrs["Service/apps/web"], claim)
			case tt.want == nil:
				return
			case !ok:
				t.Fatal("nothing published")
			case claim != *tt.want:
				t.Errorf("claim %+v, want %+v", claim, *tt.want)
			}
			if got := len(out.rrs["Service/apps/web"]); got != tt.rrs {
				t.Errorf("%d records %v, want %d", got, out.rrs["Service/apps/web"], tt.rrs)
			}
			p.remove(w, slimService(t, tt.svc))
			if _, ok := out.claims["Service/apps/web"]; ok {
				t.Error("still published after its deletion")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestPublisherRefused: Config.Refused hears of each name in a zone that
// an object is newly refused (Result.Refused, which routes give under the
// delegated policy), once until the object no longer is or is removed; a
// Namespace's annotation sets its domains in the sink under that policy.
func TestPublisherRefused(t *testing.T) {
	cfg := testConfig("example.com.")
	cfg.Ownership = index.Delegated
	var heard []string
	cfg.Refused = func(r index.Rejection) { heard = append(heard, r.Zone+" "+r.Name+" "+r.Key) }
	out := newClaimSink()
	p, w := newTestPublisher(&cfg, out)
	var refused []string // what the route's source refuses
	w.records = func(any) source.Result { return source.Result{Refused: refused} }
	route := &metav1.ObjectMeta{Namespace: "apps", Name: "web"}
	ns := &watched{Kind: source.NamespaceKind, Version: source.NamespaceKind}
	apps := namespaceMeta("apps", nil, map[string]string{source.DomainsAnnotation: "apps.example.com"})
	const www, api, outside = "www.example.com.", "api.example.com.", "www.example.org."
	for _, step := range []struct {
		desc    string
		refused []string
		do      func()
		heard   []string
		domains []string
	}{
		{"refused: heard", []string{www}, func() { p.update(w, route) }, []string{"example.com. www.example.com. Service/apps/web"}, nil},
		{"refused again: not heard again", []string{www}, func() { p.update(w, route) }, nil, nil},
		{"a second name, and one outside the zones", []string{www, api, outside}, func() { p.update(w, route) },
			[]string{"example.com. api.example.com. Service/apps/web"}, nil},
		{"no longer refused, then again: heard", []string{www}, func() { refused = nil; p.update(w, route); refused = []string{www}; p.update(w, route) },
			[]string{"example.com. www.example.com. Service/apps/web"}, nil},
		{"removed, then refused: heard", []string{www}, func() { p.remove(w, route); p.update(w, route) },
			[]string{"example.com. www.example.com. Service/apps/web"}, nil},
		{"its Namespace's domains", nil, func() { p.update(ns, apps) }, nil, []string{"apps.example.com."}},
		{"its Namespace gone", nil, func() { p.remove(ns, apps) }, nil, nil},
	} {
		heard, refused = nil, step.refused
		step.do()
		if !slices.Equal(heard, step.heard) {
			t.Errorf("%s: heard %q, want %q", step.desc, heard, step.heard)
		}
		if got := out.domains["apps"]; !slices.Equal(got, step.domains) {
			t.Errorf("%s: domains of apps %q, want %q", step.desc, got, step.domains)
		}
	}
}

func TestClaimOf(t *testing.T) {
	created := metav1.NewTime(time.Unix(1700000000, 0))
	route := &metav1.ObjectMeta{Namespace: "team-b", Name: "r", CreationTimestamp: created}
	tests := []struct {
		name string
		w    *watched
		meta metav1.Object
		want index.Claim
	}{
		// A route is checked against its own namespace, whichever Gateway it attaches to.
		{"route through a shared Gateway", &watched{Kind: source.KindByName("HTTPRoute")}, route, index.Claim{Namespace: "team-b", Created: created.UnixNano()}},
		{"nameserver Service", &watched{Kind: source.KindByName("Service"), nameserver: true}, &metav1.ObjectMeta{Namespace: "kube-system", Name: "dns1"}, index.Claim{}},
		// Its hostnames through the Service informer, the nameserver name among them.
		{"nameserver Service as a Service", &watched{Kind: source.KindByName("Service")}, &metav1.ObjectMeta{Namespace: "kube-system", Name: "dns1", CreationTimestamp: created}, index.Claim{}},
		{"another Service of its namespace", &watched{Kind: source.KindByName("Service")}, &metav1.ObjectMeta{Namespace: "kube-system", Name: "dns2", CreationTimestamp: created}, index.Claim{Namespace: "kube-system", Created: created.UnixNano()}},
		{"an Ingress named like it", &watched{Kind: source.KindByName("Ingress")}, &metav1.ObjectMeta{Namespace: "kube-system", Name: "dns1", CreationTimestamp: created}, index.Claim{Namespace: "kube-system", Created: created.UnixNano()}},
		{"cluster-scoped object", &watched{Kind: source.KindByName("Service")}, &metav1.ObjectMeta{Name: "x", CreationTimestamp: created}, index.Claim{Namespace: "/", Created: created.UnixNano()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := claimOf(tt.w, tt.meta, []string{"kube-system/dns1"}); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
