package watch

import (
	"maps"
	"net/http"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

var clientcmdExec = clientcmdapi.ExecConfig{Command: "aws", Args: []string{"eks", "get-token"}}

// TestShareKeyOf: configurations share informers exactly when they read the
// same server with the same credentials.
func TestShareKeyOf(t *testing.T) {
	base := func() *rest.Config {
		return &rest.Config{Host: "https://192.0.2.1:6443", BearerToken: "secret",
			TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")}}
	}
	key := shareKeyOf(base())
	if key == "" || shareKeyOf(base()) != key {
		t.Fatalf("equal configurations: keys %q and %q", key, shareKeyOf(base()))
	}
	for name, change := range map[string]func(*rest.Config){
		"another server":      func(c *rest.Config) { c.Host = "https://192.0.2.2:6443" },
		"another token":       func(c *rest.Config) { c.BearerToken = "other" },
		"a token file":        func(c *rest.Config) { c.BearerTokenFile = "/var/run/token" },
		"a client cert":       func(c *rest.Config) { c.CertData = []byte("cert") },
		"another CA":          func(c *rest.Config) { c.CAData = []byte("other ca") },
		"impersonation":       func(c *rest.Config) { c.Impersonate.UserName = "alice" },
		"an exec plugin":      func(c *rest.Config) { c.ExecProvider = &clientcmdExec },
		"insecure TLS":        func(c *rest.Config) { c.Insecure = true },
		"another server name": func(c *rest.Config) { c.ServerName = "api.example.com" },
	} {
		c := base()
		change(c)
		if k := shareKeyOf(c); k == key || k == "" {
			t.Errorf("%s: key %q, want one of its own", name, k)
		}
	}
	c := base()
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return rt }
	if k := shareKeyOf(c); k != "" {
		t.Errorf("a wrapped transport: key %q, want none (never shared)", k)
	}
}

// TestSharerKeys: two controllers' informers are one exactly when their API
// shares (the same ShareKey) and they read the same version, namespace,
// selectors and health setting; an API that does not share shares nothing.
func TestSharerKeys(t *testing.T) {
	svc, ing := source.KindByName("Service"), source.KindByName("Ingress")
	w := func(k *source.Kind, namespace, selector string) *watched {
		return &watched{Kind: k, Version: k, Namespace: namespace, Options: func(o *metav1.ListOptions) { o.LabelSelector = selector }}
	}
	a := &sharer{api: watchtest.API{Share: "cluster"}}
	base := a.keyOf(w(svc, "", "team=a"))
	for _, tt := range []struct {
		name string
		s    *sharer
		w    *watched
		same bool
	}{
		{"another controller, same API and informer", &sharer{api: watchtest.API{Share: "cluster"}}, w(svc, "", "team=a"), true},
		{"another cluster or credentials", &sharer{api: watchtest.API{Share: "other"}}, w(svc, "", "team=a"), false},
		{"an API that does not share", &sharer{api: watchtest.API{}}, w(svc, "", "team=a"), false},
		{"another kind", a, w(ing, "", "team=a"), false},
		{"another namespace", a, w(svc, "apps", "team=a"), false},
		{"another selector", a, w(svc, "", "team=b"), false},
		{"with the health option", &sharer{api: watchtest.API{Share: "cluster"}, health: true}, w(svc, "", "team=a"), false},
	} {
		if got := tt.s.keyOf(tt.w) == base; got != tt.same {
			t.Errorf("%s: same key %v, want %v", tt.name, got, tt.same)
		}
	}
	own := &sharer{api: watchtest.API{}}
	if own.keyOf(w(svc, "", "")) != own.keyOf(w(svc, "", "")) {
		t.Error("an API that does not share: one controller's informers of one key differ")
	}
}

// TestSharerIndexers: the Gateway API kinds with parents are indexed by
// namespace, Gateway and ListenerSet; the kinds with backends by backend
// under the health option only; other kinds not at all.
func TestSharerIndexers(t *testing.T) {
	for _, tt := range []struct {
		kind   *source.Kind
		health bool
		want   []string
	}{
		{source.KindByName("HTTPRoute"), false, []string{cache.NamespaceIndex, gatewayIndex, listenerSetIndex}},
		{source.KindByName("HTTPRoute"), true, []string{backendIndex, cache.NamespaceIndex, gatewayIndex, listenerSetIndex}},
		{source.ListenerSetKind, false, []string{cache.NamespaceIndex, gatewayIndex, listenerSetIndex}},
		{source.KindByName("Ingress"), false, nil},
		{source.KindByName("Ingress"), true, []string{backendIndex}},
		{source.KindByName("Service"), true, nil},
		{source.GatewayKind, true, nil},
	} {
		got := slices.Sorted(maps.Keys((&sharer{health: tt.health}).indexers(&watched{Kind: tt.kind, Version: tt.kind})))
		if !slices.Equal(got, slices.Sorted(slices.Values(tt.want))) {
			t.Errorf("%s, health %v: indexes %q, want %q", tt.kind.Name, tt.health, got, tt.want)
		}
	}
}
