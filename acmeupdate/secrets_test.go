package acmeupdate

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
)

func TestWatchSecrets(t *testing.T) {
	secret := func(ns, name, value string, labelled bool) runtime.Object {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"data": map[string]any{"secret": base64.StdEncoding.EncodeToString([]byte(value))},
		}}
		u.SetNamespace(ns)
		u.SetName(name)
		if labelled {
			u.SetLabels(map[string]string{SecretLabel: "true"})
		}
		return u
	}
	client := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{secretsResource: "SecretList"},
		secret("team-a", "acme", secretA, true), secret("team-b", "other", secretB, false), secret("team-c", "bad", "not base64!", true))
	core, _ := NewKey("core.", "hmac-sha256", secretB, "team-b", "Corefile")
	kr := NewKeyring([]Key{core})
	stop := make(chan struct{})
	defer close(stop)
	WatchSecrets(client, "", kr, stop)
	if k, ok := kr.Get("acme.team-a."); !ok || k.Namespace != "team-a" || k.Algorithm != "hmac-sha256." {
		t.Fatalf("key of the labelled Secret: %+v %v", k, ok)
	}
	if _, ok := kr.Get("other.team-b."); ok {
		t.Fatal("an unlabelled Secret gave a key")
	}
	if kr.Len() != 2 {
		t.Fatalf("%d keys, want 2", kr.Len())
	}
	ctx := context.Background()
	if err := client.Resource(secretsResource).Namespace("team-a").Delete(ctx, "acme", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testTimeout)
	for {
		if _, ok := kr.Get("acme.team-a."); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the deleted Secret's key is still there")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A Secret cannot take a Corefile key's name.
	if err := kr.Set("Secret/x/y", Key{Name: "core.", Namespace: "x"}); err == nil {
		t.Fatal("a Secret took a Corefile key's name")
	}
}
