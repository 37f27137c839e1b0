package acmeupdate

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
)

func newFakeStore(t *testing.T, objs ...runtime.Object) (*DNSEndpoints, *time.Time) {
	t.Helper()
	gvk := schema.GroupVersionKind{Group: "externaldns.k8s.io", Version: "v1alpha1", Kind: "DNSEndpointList"}
	client := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{dnsEndpoints: gvk.Kind}, objs...)
	now := time.Unix(1_800_000_000, 0)
	return &DNSEndpoints{Client: client, Expire: time.Hour, Now: func() time.Time { return now }}, &now
}

func editOps(ops ...op) EditFunc {
	return func(values []string, ttl uint32) ([]string, uint32, error) {
		v, t := applyOps(values, ttl, challengeA, ops)
		return v, t, nil
	}
}

func TestDNSEndpointsStore(t *testing.T) {
	s, now := newFakeStore(t)
	ctx := context.Background()
	get := func() *unstructured.Unstructured {
		obj, err := s.Client.Resource(dnsEndpoints).Namespace("team-a").Get(ctx, ObjectName(challengeA), metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return obj
	}
	steps := []struct {
		ops            []op
		want           []string
		added, removed []string // the change reported
	}{
		{[]op{{kind: opAdd, name: challengeA, value: "v1", ttl: 60}}, []string{"v1"}, []string{"v1"}, nil},
		{[]op{{kind: opAdd, name: challengeA, value: "v2", ttl: 60}}, []string{"v1", "v2"}, []string{"v2"}, nil},
		{[]op{{kind: opAdd, name: challengeA, value: "v2", ttl: 60}}, []string{"v1", "v2"}, nil, nil},
		{[]op{{kind: opDelete, name: challengeA, value: "v1"}}, []string{"v2"}, nil, []string{"v1"}},
		{[]op{{kind: opDelete, name: challengeA, value: "nope"}}, []string{"v2"}, nil, nil},
		{[]op{{kind: opDeleteSet, name: challengeA}}, nil, nil, []string{"v2"}},
		{[]op{{kind: opDeleteSet, name: challengeA}}, nil, nil, nil},
	}
	for i, st := range steps {
		change, err := s.Edit(ctx, "team-a", challengeA, keyA, editOps(st.ops...))
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if !slices.Equal(change.Added, st.added) || !slices.Equal(change.Removed, st.removed) {
			t.Errorf("step %d: change +%q -%q, want +%q -%q", i, change.Added, change.Removed, st.added, st.removed)
		}
		got, _ := endpointValues(get())
		if !slices.Equal(got, st.want) {
			t.Fatalf("step %d: values %q, want %q", i, got, st.want)
		}
		if obj := get(); obj != nil && (obj.GetLabels()[WrittenByLabel] != writtenByValue || obj.GetAnnotations()[NameAnnotation] != challengeA) {
			t.Fatalf("step %d: marks %v %v", i, obj.GetLabels(), obj.GetAnnotations())
		}
	}
	if get() != nil {
		t.Fatal("the object outlived its last value")
	}
	// An object of the same name that is not the plugin's is left alone.
	foreign := s.object("team-a", challengeA, keyA, []string{"theirs"}, 60)
	foreign.SetLabels(nil)
	if _, err := s.Client.Resource(dnsEndpoints).Namespace("team-a").Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Edit(ctx, "team-a", challengeA, keyA, editOps(op{kind: opDeleteSet, name: challengeA})); err == nil {
		t.Fatal("edited an object the plugin did not write")
	}
	// The janitor deletes only the plugin's expired objects.
	_ = s.Client.Resource(dnsEndpoints).Namespace("team-a").Delete(ctx, foreign.GetName(), metav1.DeleteOptions{})
	if _, err := s.Edit(ctx, "team-a", challengeA, keyA, editOps(op{kind: opAdd, name: challengeA, value: "v", ttl: 60})); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ExpireNow(ctx, ""); err != nil || n != 0 {
		t.Fatalf("expired %d early (%v)", n, err)
	}
	*now = now.Add(time.Hour + time.Second)
	if n, err := s.ExpireNow(ctx, ""); err != nil || n != 1 || get() != nil {
		t.Fatalf("expired %d (%v)", n, err)
	}
}
