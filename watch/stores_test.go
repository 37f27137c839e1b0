package watch

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// stored returns an informer of kind in namespace, not run, whose cache
// holds objs as the informer keeps them (transformed), with the indexes a
// controller gives it (health adds the backend index).
func stored(t testing.TB, kind *source.Kind, namespace string, health bool, objs ...any) *watched {
	t.Helper()
	w := &watched{Kind: kind, Version: kind, Namespace: namespace}
	w.informer = cache.NewSharedIndexInformer(&cache.ListWatch{}, kind.Object, 0, (&sharer{health: health}).indexers(w))
	transform := source.WithKey(kind.Name, kind.Transform)
	for _, obj := range objs {
		obj, err := transform(obj)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.informer.GetStore().Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// namespaceMeta is a Namespace as its informer keeps it.
func namespaceMeta(name string, labels, annotations map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
}

// TestStoresInformerFor: a lookup reads the informer of the object's
// namespace, else the one of all namespaces; a newer registration of a kind
// and namespace replaces the older.
func TestStoresInformerFor(t *testing.T) {
	s := newStores(&Config{})
	svc, ing := source.KindByName("Service"), source.KindByName("Ingress")
	all := stored(t, ing, "", false)
	apps := stored(t, ing, "apps", false)
	old := stored(t, svc, "", false)
	s.register(old)
	s.register(all)
	s.register(apps)
	newer := &watched{Kind: svc, Version: svc, Namespace: ""}
	s.register(newer)
	for _, tt := range []struct {
		kind, namespace string
		want            *watched
		version         string
	}{
		{"Ingress", "apps", apps, "networking.k8s.io/v1"},
		{"Ingress", "other", all, "networking.k8s.io/v1"},
		{"Ingress", "", all, "networking.k8s.io/v1"},
		{"Service", "apps", newer, "v1"},
		{"HTTPRoute", "apps", nil, ""},
	} {
		if got := s.informerFor(tt.kind, tt.namespace); got != tt.want {
			t.Errorf("informerFor(%s, %q) = %v, want %v", tt.kind, tt.namespace, got, tt.want)
		}
		if got := s.readVersion(tt.kind, tt.namespace); got != tt.version {
			t.Errorf("readVersion(%s, %q) = %q, want %q", tt.kind, tt.namespace, got, tt.version)
		}
	}
	if got := len(s.ofKind("Ingress")); got != 2 {
		t.Errorf("ofKind(Ingress): %d informers, want 2", got)
	}
}

// TestStoresContext: the lookups of source.Context find the objects in the
// informer that reads their namespace, and nothing where none reads.
func TestStoresContext(t *testing.T) {
	gw := testutil.Gateway("infra", "gw", []string{"192.0.2.1"})
	ls := testutil.ListenerSet("apps", "ls", "infra", "gw", metav1.ConditionTrue)
	s := newStores(&Config{Ownership: index.Delegated, Delegations: map[string][]string{"team": {"team.example.com."}}})
	s.register(stored(t, source.GatewayKind, "infra", false, gw))
	s.register(stored(t, source.ListenerSetKind, "", false, ls))
	s.register(stored(t, source.NamespaceKind, "apps", false, namespaceMeta("apps", map[string]string{"expose": "yes"},
		map[string]string{source.DomainsAnnotation: "apps.example.com, not a name"})))
	s.register(stored(t, source.IngressClassKind, "", false,
		testutil.IngressClass("old", 1, "true"), testutil.IngressClass("plain", 2, ""), testutil.IngressClass("newer", 3, "true")))

	if labels, ok := s.NamespaceLabels("apps"); !ok || labels["expose"] != "yes" {
		t.Errorf("NamespaceLabels(apps) = %v %v", labels, ok)
	}
	if _, ok := s.NamespaceLabels("other"); ok {
		t.Error("NamespaceLabels(other): known, but no informer reads it")
	}
	for _, tt := range []struct {
		name string
		got  any
		want any
	}{
		{"Gateway in its namespace", s.Gateway("infra", "gw").GetUID(), gw.UID},
		{"Gateway of a namespace not read", s.Gateway("apps", "gw") == nil, true},
		{"Gateway unknown", s.Gateway("infra", "other") == nil, true},
		{"ListenerSet through the informer of all namespaces", s.ListenerSet("apps", "ls") != nil, true},
		{"ListenerSet unknown", s.ListenerSet("apps", "other") == nil, true},
		{"default IngressClass: the newest marked default", s.DefaultIngressClass(), "newer"},
		{"MayPublish by the Corefile's delegation", s.MayPublish("team", "www.team.example.com."), true},
		{"MayPublish by the Namespace's annotation", s.MayPublish("apps", "www.apps.example.com."), true},
		{"MayPublish outside the Namespace's domains", s.MayPublish("apps", "www.team.example.com."), false},
		{"MayPublish for a Namespace not read", s.MayPublish("other", "www.apps.example.com."), false},
		{"MayPublish without the delegated policy", newStores(&Config{}).MayPublish("other", "anything.example."), true},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}
