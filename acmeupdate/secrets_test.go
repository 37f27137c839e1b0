package acmeupdate

import (
	"context"
	"encoding/base64"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kwatch "k8s.io/apimachinery/pkg/watch"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/internal/informer"
)

// secret is a Secret holding value as its TSIG secret, labelled or not.
func secret(ns, name, value string, labelled bool) *unstructured.Unstructured {
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

func TestWatchSecrets(t *testing.T) {
	client := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{secretsResource: "SecretList"},
		secret("team-a", "acme", secretA, true), secret("team-b", "other", secretB, false), secret("team-c", "bad", "not base64!", true))
	core, _ := NewKey("core.", "hmac-sha256", secretB, "team-b", "Corefile")
	kr := NewKeyring([]Key{core})
	stop := make(chan struct{})
	defer close(stop)
	WatchSecrets(client, "", SecretTenancy{}, kr, stop)
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

// TestWatchSecretsAfterOutage: a TSIG Secret changed while the API server is
// down is read within about a second of its return, as the kinds are: the
// informer's guard retries its watch with a short backoff and, the resource
// version gone (a restart after a compaction), lists again at once.
func TestWatchSecretsAfterOutage(t *testing.T) {
	old := secretsTiming
	secretsTiming = informer.Timing{RetryInitial: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, ThrottledMax: 50 * time.Millisecond}
	defer func() { secretsTiming = old }()
	client := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{secretsResource: "SecretList"},
		secret("team-a", "acme", secretA, true))
	var mu sync.Mutex
	var down, expired bool
	var current *kwatch.FakeWatcher
	client.PrependReactor("list", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return true, nil, syscall.ECONNREFUSED
		}
		return false, nil, nil
	})
	client.PrependWatchReactor("secrets", func(k8stesting.Action) (bool, kwatch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case down:
			return true, nil, syscall.ECONNREFUSED
		case expired:
			expired = false
			return true, nil, apierrors.NewResourceExpired("too old resource version")
		}
		current = kwatch.NewFake()
		return true, current, nil
	})
	kr := NewKeyring(nil)
	stop := make(chan struct{})
	defer close(stop)
	WatchSecrets(client, "", SecretTenancy{}, kr, stop)
	if k, ok := kr.Get("acme.team-a."); !ok || k.Secret != secretA {
		t.Fatalf("before the outage: key %+v %v", k, ok)
	}

	// The API server goes down: the watch ends (after more than a second:
	// the reflector backs off after a shorter one), and the Secret changes.
	time.Sleep(1100 * time.Millisecond)
	mu.Lock()
	down = true
	if current != nil {
		current.Stop()
	}
	mu.Unlock()
	if _, err := client.Resource(secretsResource).Namespace("team-a").Update(context.Background(), secret("team-a", "acme", secretB, true), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	down, expired = false, true
	mu.Unlock()
	back := time.Now()
	for {
		if k, ok := kr.Get("acme.team-a."); ok && k.Secret == secretB {
			break
		}
		if time.Since(back) > 1500*time.Millisecond {
			t.Fatal("the Secret changed during the outage was not read within about a second of the API's return")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("read %s after the API server's return", time.Since(back).Round(time.Millisecond))
}

// tenantSecret is a labelled Secret of ns holding secretA, with the tenant
// label naming tenant when it is not "-".
func tenantSecret(ns, name, tenant string) *unstructured.Unstructured {
	u := secret(ns, name, secretA, true)
	if tenant != "-" {
		u.SetLabels(map[string]string{SecretLabel: "true", tenantLabel: tenant})
	}
	return u
}

// TestSecretTenancy: a key of the tenants' keys' namespace acts for the
// tenant its label names, and only there; elsewhere a key acts for its own
// namespace, and a label naming another one gives no key.
func TestSecretTenancy(t *testing.T) {
	shared := SecretTenancy{shared: "platform"}
	listed := SecretTenancy{shared: "platform", tenants: []string{"team-a", "team-b"}}
	cases := []struct {
		what   string
		st     SecretTenancy
		secret *unstructured.Unstructured
		tenant string // "" when no key
	}{
		{"shared, labelled", shared, tenantSecret("platform", "a", "team-a"), "team-a"},
		{"shared, among the tenants", listed, tenantSecret("platform", "b", "team-b"), "team-b"},
		{"shared, not among the tenants", listed, tenantSecret("platform", "c", "team-c"), ""},
		{"shared, no tenant label", shared, tenantSecret("platform", "x", "-"), ""},
		{"shared, empty tenant label", shared, tenantSecret("platform", "x", ""), ""},
		{"shared, not a namespace name", shared, tenantSecret("platform", "x", "Team_A"), ""},
		{"own namespace", shared, tenantSecret("team-a", "acme", "-"), "team-a"},
		{"own namespace, labelled with itself", shared, tenantSecret("team-a", "acme", "team-a"), "team-a"},
		{"own namespace, labelled with another", shared, tenantSecret("team-b", "acme", "team-a"), ""},
		{"no shared namespace, labelled with another", SecretTenancy{}, tenantSecret("platform", "a", "team-a"), ""},
	}
	for _, c := range cases {
		k, err := secretKey(c.secret, c.st)
		switch {
		case c.tenant == "" && err == nil:
			t.Errorf("%s: key %s acts for %s, want none", c.what, k.Name, k.Namespace)
		case c.tenant != "" && err != nil:
			t.Errorf("%s: %v", c.what, err)
		case c.tenant != "" && (k.Namespace != c.tenant || k.Name != c.secret.GetName()+"."+c.secret.GetNamespace()+"."):
			t.Errorf("%s: key %s acts for %s, want %s", c.what, k.Name, k.Namespace, c.tenant)
		}
	}
}

// TestTenantSecretActsForItsTenant: a key of the tenants' keys' namespace
// writes its challenges in its tenant's namespace and may answer only that
// tenant's names.
func TestTenantSecretActsForItsTenant(t *testing.T) {
	client := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{secretsResource: "SecretList"},
		tenantSecret("platform", "for-a", "team-a"), tenantSecret("platform", "for-b", "team-b"))
	u, store, _ := testUpdater(t, nil)
	stop := make(chan struct{})
	defer close(stop)
	WatchSecrets(client, "platform", SecretTenancy{shared: "platform"}, u.cfg.Keys, stop)
	send := func(key string) int {
		m := updateMsg(testZone)
		m.Id = dns.Id()
		m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
		wire, _ := signed(t, m, key, dns.HmacSHA256, secretA, time.Now())
		reply, _ := serve(t, u, wire)
		return reply.Rcode
	}
	if rc := send("for-b.platform."); rc != dns.RcodeRefused {
		t.Errorf("team-b's key at team-a's name: %s, want REFUSED", dns.RcodeToString[rc])
	}
	if rc := send("for-a.platform."); rc != dns.RcodeSuccess {
		t.Errorf("team-a's key at team-a's name: %s", dns.RcodeToString[rc])
	}
	if got := store.values("team-a", challengeA); len(got) != 1 {
		t.Errorf("team-a's namespace holds %q", got)
	}
	if got := store.values("platform", challengeA); len(got) != 0 {
		t.Errorf("the keys' namespace holds %q", got)
	}
}
