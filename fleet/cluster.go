package fleet

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// Cluster is one cluster the plugin reads: its controller, which puts the
// Cluster's records into the plugin's index, and what reports on it.
type Cluster struct {
	Name       string // "" for the one cluster of a block without cluster blocks
	Controller *watch.Controller
	sink       *clusterSink // nil for the unnamed cluster, which feeds the index directly
	out        watch.Sink   // the plugin's sink (the index)
	emitEvents bool
	// Events emits Kubernetes Events into this cluster while it runs.
	Events atomic.Pointer[watch.Events]
	stopCh chan struct{} // closed to stop the health watch
	done   chan struct{} // closed when the health watch has stopped
}

// NewCluster makes the cluster name with its controller on api, which puts
// its records into out.
func NewCluster(name string, cfg watch.Config, api watch.API, out watch.Sink, emitEvents bool) *Cluster {
	cl := &Cluster{Name: name, emitEvents: emitEvents, out: out}
	if name != "" {
		cfg.Prefix = name + "/"
		cfg.Cluster = name
		cl.sink = newClusterSink(cfg.Prefix, out)
		out = cl.sink
	}
	cl.Controller = watch.New(cfg, api, out)
	return cl
}

// Fleet is the set of clusters a plugin reads.
type Fleet struct {
	mu      sync.RWMutex
	members []*Cluster
	byName  map[string]*Cluster
}

func (f *Fleet) Add(cl *Cluster) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byName == nil {
		f.byName = map[string]*Cluster{}
	}
	f.members = append(f.members, cl)
	f.byName[cl.Name] = cl
}

// remove takes the cluster name out of the fleet and returns it, or nil.
func (f *Fleet) remove(name string) *Cluster {
	f.mu.Lock()
	defer f.mu.Unlock()
	cl := f.byName[name]
	if cl == nil {
		return nil
	}
	delete(f.byName, name)
	for i, m := range f.members {
		if m == cl {
			f.members = append(f.members[:i:i], f.members[i+1:]...)
			break
		}
	}
	return cl
}

// List returns the clusters, in the order they were added.
func (f *Fleet) List() []*Cluster {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return append([]*Cluster(nil), f.members...)
}

// Of returns the cluster an index key belongs to and the key without the
// Cluster's prefix ("Kind/namespace/name"), or nil. Keys of named clusters
// start with "<cluster>/"; a cluster name is lower case, a kind is not.
func (f *Fleet) Of(key string) (*Cluster, string) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if name, rest, ok := strings.Cut(key, "/"); ok {
		if cl := f.byName[name]; cl != nil && name != "" {
			return cl, rest
		}
	}
	return f.byName[""], key
}

// clusterSink feeds the index with the records of one named cluster. Its
// namespaces are tenants of their own: "<cluster>/<namespace>", so that a
// namespace is never the same tenant as its namesake in another cluster. It
// remembers what it put, to withdraw all of it when the cluster goes.
type clusterSink struct {
	prefix string
	out    watch.Sink

	mu         sync.Mutex
	keys       map[string]struct{}
	namespaces map[string]struct{} // with domains set
	fresh      map[string]struct{} // keys put since mark; nil when not marking
}

func newClusterSink(prefix string, out watch.Sink) *clusterSink {
	return &clusterSink{prefix: prefix, out: out, keys: map[string]struct{}{}, namespaces: map[string]struct{}{}}
}

// UpdateClaim implements sink.
func (s *clusterSink) UpdateClaim(key string, claim index.Claim, rrs []dns.RR) {
	if claim.Namespace != "" {
		claim.Namespace = s.prefix + claim.Namespace
	}
	s.mu.Lock()
	if len(rrs) == 0 {
		delete(s.keys, key)
	} else {
		s.keys[key] = struct{}{}
	}
	if s.fresh != nil {
		s.fresh[key] = struct{}{}
	}
	s.mu.Unlock()
	s.out.UpdateClaim(key, claim, rrs)
}

// SetDomains implements sink.
func (s *clusterSink) SetDomains(namespace string, domains []string) {
	s.mu.Lock()
	if len(domains) == 0 {
		delete(s.namespaces, namespace)
	} else {
		s.namespaces[namespace] = struct{}{}
	}
	s.mu.Unlock()
	s.out.SetDomains(s.prefix+namespace, domains)
}

// withdraw removes every record and domain the cluster put. Its controller
// must have stopped.
func (s *clusterSink) withdraw() {
	s.mu.Lock()
	keys, namespaces := s.keys, s.namespaces
	s.keys, s.namespaces = map[string]struct{}{}, map[string]struct{}{}
	s.mu.Unlock()
	for key := range keys {
		s.out.UpdateClaim(key, index.Claim{}, nil)
	}
	for ns := range namespaces {
		s.out.SetDomains(s.prefix+ns, nil)
	}
}

// mark starts a new listing of the cluster (a new controller after its
// kubeconfig changed): sweep then removes the keys not put since.
func (s *clusterSink) mark() {
	s.mu.Lock()
	s.fresh = map[string]struct{}{}
	s.mu.Unlock()
}

// sweep removes the keys not put since mark: objects gone meanwhile.
func (s *clusterSink) sweep() {
	s.mu.Lock()
	var stale []string
	for key := range s.keys {
		if _, ok := s.fresh[key]; !ok {
			stale = append(stale, key)
		}
	}
	s.fresh = nil
	s.mu.Unlock()
	for _, key := range stale {
		s.UpdateClaim(key, index.Claim{}, nil)
	}
}

// HealthTiming is how a named cluster's contact with its API server is
// watched: checked every interval, reported after unreachableAfter.
type HealthTiming struct {
	Every, UnreachableAfter time.Duration
}

// Start starts the cluster's controller, its Events and its health watch.
func (cl *Cluster) Start(h HealthTiming) error {
	if cl.emitEvents {
		ev, err := cl.Controller.Events()
		if err != nil {
			return err
		}
		if ev != nil {
			cl.Events.Store(ev)
			cl.Controller.SetHealthHook(ev.HealthChanged)
		}
	}
	cl.Controller.Start()
	if cl.Name != "" {
		cl.stopCh, cl.done = make(chan struct{}), make(chan struct{})
		go cl.watchHealth(h)
	}
	return nil
}

// Stop stops what start started.
func (cl *Cluster) Stop() {
	cl.Controller.Stop()
	if cl.stopCh != nil {
		close(cl.stopCh)
		<-cl.done
		cl.stopCh = nil
	}
	if e := cl.Events.Swap(nil); e != nil {
		e.Stop()
	}
}
