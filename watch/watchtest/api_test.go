package watchtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// kindOf returns the kind of name, published or read for others.
func kindOf(name string) *source.Kind {
	if name == source.NamespaceKind.Name {
		return source.NamespaceKind
	}
	return source.KindByName(name)
}

// TestListDecoded: the fake's lists come in the types the informers decode
// a real API server's into, narrowed as the informers narrow them.
func TestListDecoded(t *testing.T) {
	ns := func(name string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	api := API{Core: fake.NewSimpleClientset(
		testutil.NamedService("apps", "web", "192.0.2.1"),
		testutil.NamedIngress("apps", "site", []string{"www.example.com"}, "192.0.2.2"),
		ns("apps"), ns("team-b"),
	)}
	for _, tc := range []struct {
		kind, namespace string
		wantType        string
		wantNames       []string
	}{
		{"Service", "", "*source.ServiceList", []string{"web"}},
		{"Ingress", "apps", "*source.IngressList", []string{"site"}},
		{"Ingress", "team-b", "*source.IngressList", nil},
		{"Namespace", "", "*v1.PartialObjectMetadataList", []string{"apps", "team-b"}},
		{"Namespace", "team-b", "*v1.PartialObjectMetadataList", []string{"team-b"}}, // the one Namespace of a namespaced block
	} {
		t.Run(tc.kind+"/"+tc.namespace, func(t *testing.T) {
			list, _ := api.ListWatch(kindOf(tc.kind), tc.namespace)
			out, err := list(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%T", out); got != tc.wantType {
				t.Errorf("type %s, want %s", got, tc.wantType)
			}
			items, err := meta.ExtractList(out)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range items {
				m, _ := meta.Accessor(o)
				names = append(names, m.GetName())
			}
			if fmt.Sprint(names) != fmt.Sprint(tc.wantNames) {
				t.Errorf("names %v, want %v", names, tc.wantNames)
			}
		})
	}
}

// TestWatchDecoded: watch events carry the decoded type, and a namespaced
// block's Namespace watch hears of its own Namespace only.
func TestWatchDecoded(t *testing.T) {
	client := fake.NewSimpleClientset()
	api := API{Core: client}
	ctx := context.Background()
	_, watchSvc := api.ListWatch(source.KindByName("Service"), "")
	_, watchNs := api.ListWatch(source.NamespaceKind, "team-b")
	ws, err := watchSvc(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Stop()
	wn, err := watchNs(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer wn.Stop()

	if err := Create(client, testutil.NamedService("apps", "web", "192.0.2.1")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"apps", "team-b"} {
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	next := func(w kwatch.Interface) kwatch.Event {
		t.Helper()
		select {
		case e := <-w.ResultChan():
			return e
		case <-time.After(5 * time.Second):
			t.Fatal("no event in 5s")
		}
		return kwatch.Event{}
	}
	if e := next(ws); e.Type != kwatch.Added || fmt.Sprintf("%T", e.Object) != "*source.Service" {
		t.Errorf("Service event: %s %T, want ADDED *source.Service", e.Type, e.Object)
	}
	e := next(wn)
	m, _ := meta.Accessor(e.Object)
	if fmt.Sprintf("%T", e.Object) != "*v1.PartialObjectMetadata" || m.GetName() != "team-b" {
		t.Errorf("Namespace event: %T %s, want *v1.PartialObjectMetadata team-b (apps filtered out)", e.Object, m.GetName())
	}
}
