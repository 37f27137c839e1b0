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

// sharedKeyOf returns the key of w's informer. An API that does not share
// gets a key of the controller's own.
func (c *Controller) sharedKeyOf(w *watched) sharedKey {
	var o metav1.ListOptions
	w.Options(&o)
	api := fmt.Sprintf("controller %p", c)
	if s, ok := c.api.(Sharer); ok && s.ShareKey() != "" {
		api = s.ShareKey()
	}
	return sharedKey{api: api, version: w.Version, namespace: w.Namespace, selectors: o.LabelSelector + "\x00" + o.FieldSelector, health: c.cfg.Health}
}

// acquire returns the running informer of w's key, starting it when none
// runs; release must be called when w stops.
func (c *Controller) acquire(w *watched) (sharedKey, *sharedInformer) {
	key := c.sharedKeyOf(w)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	s := shared.informers[key]
	if s == nil {
		s = c.newSharedInformer(w)
		shared.informers[key] = s
		go func() {
			defer close(s.done)
			s.informer.Run(s.stop)
		}()
	}
	s.users++
	return key, s
}

// joinable reports whether a running informer of w's key has synced and
// the API server lets it read: a block that joins it (a reload) needs no
// probe, and nothing is listed again.
func (c *Controller) joinable(w *watched) bool {
	key := c.sharedKeyOf(w)
	shared.mu.Lock()
	s := shared.informers[key]
	shared.mu.Unlock()
	return s != nil && s.informer.HasSynced() && s.guard.State().IsAllowed()
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

// newSharedInformer makes the informer of w and its API guard (the one
// informer recipe, internal/informer). The guard lives as long as the shared
// informer, longer than the controller that made it: nothing in it may
// reach w or c (a reload would keep the old block, its index included, alive).
func (c *Controller) newSharedInformer(w *watched) *sharedInformer {
	list, watchFn := c.api.ListWatch(w.Version, w.Namespace)
	// Like the generated informers, tell the reflector whether the client
	// supports WatchList: client-go's fake clients do not, and an informer
	// that waits for WatchList's initial-events bookmark on them never syncs.
	var client any = c.api
	if w.Kind.ByName && w.Namespace != "" {
		client = noWatchList{}
	}
	inf, guard := informer.New(informer.Config{
		Kind: w.Kind.Name, What: w.what(), List: list, Watch: watchFn, Options: w.Options,
		Object: w.Version.Object, Client: client, Timing: c.cfg.Timing.Guard,
		Indexers: c.indexers(w), Transform: source.WithKey(w.Kind.Name, w.Version.Transform),
	})
	return &sharedInformer{informer: inf, guard: guard, stop: make(chan struct{}), done: make(chan struct{})}
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
