package watch

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/internal/informer"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// Shared informers (issue 28). The controllers of the blocks that read one
// cluster with the same credentials, such as the views of a split horizon,
// share one informer, so one cache and one list and watch on the API server,
// per kind version, namespace and server-side filter. Each controller adds
// its own event handler, with its own zones, filters and index; a block that
// joins a running informer gets its cache replayed, and is synced without a
// list. The informer stops when its last controller leaves. On a Corefile
// reload CoreDNS starts the new instance before it stops the old one, so the
// new blocks join the running informers and nothing is listed again.

// Sharer is implemented by an API whose informers other controllers may
// share: ShareKey identifies the cluster and the credentials. APIs with the
// same non-empty key read the same objects; "" shares nothing.
type Sharer interface{ ShareKey() string }

// sharedKey says which informers are one: the same cluster and credentials,
// version of a kind (its object, transform and indexers), namespace, and
// list options (the label and field selectors the API server applies).
type sharedKey struct {
	api       string
	version   *source.Kind
	namespace string
	selectors string
	health    bool // the health option adds an index of backends
}

// sharedInformer is one running informer and the controllers that use it.
type sharedInformer struct {
	informer cache.SharedIndexInformer
	guard    *informer.Guard
	users    int
	stop     chan struct{} // closed when the last user leaves
	done     chan struct{} // closed once the informer has stopped
}

var shared = struct {
	mu        sync.Mutex
	informers map[sharedKey]*sharedInformer
}{informers: map[sharedKey]*sharedInformer{}}

// sharer starts the informers of one controller, or joins those that
// another controller runs for the same key.
type sharer struct {
	api    API
	health bool        // Config.Health: the informers index backends
	guard  GuardTiming // Config.Timing.Guard
}

// keyOf returns the key of w's informer. An API that does not share gets a
// key of the controller's own.
func (s *sharer) keyOf(w *watched) sharedKey {
	var o metav1.ListOptions
	w.Options(&o)
	api := fmt.Sprintf("controller %p", s)
	if sh, ok := s.api.(Sharer); ok && sh.ShareKey() != "" {
		api = sh.ShareKey()
	}
	return sharedKey{api: api, version: w.Version, namespace: w.Namespace, selectors: o.LabelSelector + "\x00" + o.FieldSelector, health: s.health}
}

// acquire returns the running informer of w's key, starting it when none
// runs; release must be called when w stops.
func (s *sharer) acquire(w *watched) (sharedKey, *sharedInformer) {
	key := s.keyOf(w)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	si := shared.informers[key]
	if si == nil {
		si = s.newInformer(w)
		shared.informers[key] = si
		go func() {
			defer close(si.done)
			si.informer.Run(si.stop)
		}()
	}
	si.users++
	return key, si
}

// joinable reports whether a running informer of w's key has synced and
// the API server lets it read: a block that joins it (a reload) needs no
// probe, and nothing is listed again.
func (s *sharer) joinable(w *watched) bool {
	key := s.keyOf(w)
	shared.mu.Lock()
	si := shared.informers[key]
	shared.mu.Unlock()
	return si != nil && si.informer.HasSynced() && si.guard.State().IsAllowed()
}

// release leaves the informer of key; the last user stops it and waits
// until it has stopped.
func release(key sharedKey, s *sharedInformer) {
	shared.mu.Lock()
	s.users--
	last := s.users == 0
	if last {
		delete(shared.informers, key)
		close(s.stop)
	}
	shared.mu.Unlock()
	if last {
		<-s.done
	}
}

// newInformer makes the informer of w and its API guard (the one
// informer recipe, internal/informer). The guard lives as long as the shared
// informer, longer than the controller that made it: nothing in it may
// reach w or the controller (a reload would keep the old block, its index
// included, alive).
func (s *sharer) newInformer(w *watched) *sharedInformer {
	list, watchFn := s.api.ListWatch(w.Version, w.Namespace)
	// Like the generated informers, tell the reflector whether the client
	// supports WatchList: client-go's fake clients do not, and an informer
	// that waits for WatchList's initial-events bookmark on them never syncs.
	var client any = s.api
	if w.Kind.ByName && w.Namespace != "" {
		client = noWatchList{}
	}
	inf, guard := informer.New(informer.Config{
		Kind: w.Kind.Name, What: w.what(), List: list, Watch: watchFn, Options: w.Options,
		Object: w.Version.Object, Client: client, Timing: s.guard,
		Indexers: s.indexers(w), Transform: source.WithKey(w.Kind.Name, w.Version.Transform),
	})
	return &sharedInformer{informer: inf, guard: guard, stop: make(chan struct{}), done: make(chan struct{})}
}

// indexers returns the indexes of w's informer, the same for every
// controller that shares it (sharedKey).
func (s *sharer) indexers(w *watched) cache.Indexers {
	// Only the Gateway API kinds are looked up by namespace (see
	// dependencies.go); for Ingresses and Services the index would be a
	// set of every key per namespace, 160 bytes an object, for nothing.
	indexers := cache.Indexers{}
	if parents := w.Version.Parents; parents != nil {
		indexers[cache.NamespaceIndex] = cache.MetaNamespaceIndexFunc
		indexers[gatewayIndex] = func(obj any) ([]string, error) { gws, _ := parents(obj); return gws, nil }
		indexers[listenerSetIndex] = func(obj any) ([]string, error) { _, lss := parents(obj); return lss, nil }
	}
	if backends := w.Version.Backends; backends != nil && s.health {
		indexers[backendIndex] = func(obj any) ([]string, error) { return backends(obj), nil }
	}
	return indexers
}

// shareKeyOf identifies the cluster and the credentials of cfg, for
// Sharer; "" for a configuration with a transport, dialer or wrapper of its
// own, which no other may be assumed to equal.
func shareKeyOf(cfg *rest.Config) string {
	if cfg.Transport != nil || cfg.WrapTransport != nil || cfg.Dial != nil || cfg.Proxy != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %q %q %q %q\n", cfg.Host, cfg.APIPath, cfg.Username, cfg.Password, cfg.BearerToken, cfg.BearerTokenFile, cfg.UserAgent)
	fmt.Fprintf(h, "%+v\n", cfg.Impersonate)
	t := cfg.TLSClientConfig
	fmt.Fprintf(h, "%v %q %q %q %q %q %q %q\n", t.Insecure, t.ServerName, t.CertFile, t.KeyFile, t.CAFile, t.CertData, t.KeyData, t.CAData)
	if cfg.ExecProvider != nil {
		fmt.Fprintf(h, "exec %+v\n", *cfg.ExecProvider)
	}
	if cfg.AuthProvider != nil {
		fmt.Fprintf(h, "auth %+v\n", *cfg.AuthProvider)
	}
	fmt.Fprintf(h, "%v %v %v\n", cfg.QPS, cfg.Burst, cfg.Timeout)
	return hex.EncodeToString(h.Sum(nil))
}

// sharedInformers returns how many informers run, shared or not.
func sharedInformers() int {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return len(shared.informers)
}
