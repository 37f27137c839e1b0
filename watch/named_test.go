package watch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// namedServer answers the requests of namedListWatch for the Namespace apps,
// refuses the Namespace locked, and has no Namespace gone. It records the
// requests it gets.
type namedServer struct {
	mu       sync.Mutex
	requests []string // path?query
}

func (s *namedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.Path+"?"+r.URL.RawQuery)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	apps := `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"apps","resourceVersion":"7","labels":{"team":"a"}}}`
	switch r.URL.Path {
	case "/api/v1/namespaces/apps":
		_, _ = w.Write([]byte(apps))
	case "/api/v1/watch/namespaces/apps":
		_, _ = w.Write([]byte(`{"type":"MODIFIED","object":` + strings.Replace(apps, `"7"`, `"8"`, 1) + "}\n"))
	case "/api/v1/namespaces/locked":
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`))
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}
}

// TestNamedListWatch: a Namespace is read by name, in the paths that the API
// server authorizes in that namespace; one that does not exist is an empty
// list, one that is refused an error.
func TestNamedListWatch(t *testing.T) {
	srv := &namedServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	api, err := NewRestAPI(&rest.Config{Host: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name      string
		wantItems []string
		wantRV    string
		forbidden bool
	}{
		{name: "apps", wantItems: []string{"apps"}, wantRV: "7"},
		{name: "gone"},
		{name: "locked", forbidden: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			list, _ := api.ListWatch(source.NamespaceKind, c.name)
			obj, err := list(ctx, metav1.ListOptions{Limit: 1, LabelSelector: "x=y"})
			if c.forbidden {
				if !apierrors.IsForbidden(err) {
					t.Fatalf("got %v, want forbidden", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			nl := obj.(*metav1.PartialObjectMetadataList)
			var names []string
			for _, ns := range nl.Items {
				names = append(names, ns.Name)
			}
			if strings.Join(names, " ") != strings.Join(c.wantItems, " ") || nl.ResourceVersion != c.wantRV {
				t.Errorf("list: items %q at %q, want %q at %q", names, nl.ResourceVersion, c.wantItems, c.wantRV)
			}
		})
	}

	_, watchFn := api.ListWatch(source.NamespaceKind, "apps")
	w, err := watchFn(ctx, metav1.ListOptions{ResourceVersion: "7", AllowWatchBookmarks: true, FieldSelector: "metadata.name=apps"})
	if err != nil {
		t.Fatal(err)
	}
	e := <-w.ResultChan()
	w.Stop()
	if ns, ok := e.Object.(*metav1.PartialObjectMetadata); !ok || ns.Name != "apps" || ns.ResourceVersion != "8" || ns.Labels["team"] != "a" {
		t.Errorf("watch event %s %#v", e.Type, e.Object)
	}

	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, r := range srv.requests {
		path, query, _ := strings.Cut(r, "?")
		if !strings.HasSuffix(path, "/namespaces/apps") && !strings.HasSuffix(path, "/namespaces/gone") && !strings.HasSuffix(path, "/namespaces/locked") {
			t.Errorf("request outside the named Namespaces: %s", r)
		}
		if strings.Contains(query, "fieldSelector") || strings.Contains(query, "labelSelector") {
			t.Errorf("request with a selector (a cluster-scope request): %s", r)
		}
		if strings.HasPrefix(path, "/api/v1/watch/") && !strings.Contains(query, "resourceVersion=7") {
			t.Errorf("watch not from the listed version: %s", r)
		}
	}
}
