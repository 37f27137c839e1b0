package gateway

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-e581d630/k8s_gateway/watch"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// cluster is one cluster the plugin reads: its controller, which puts the
// cluster's records into the plugin's index, and what reports on it.
type cluster struct {
	name       string // "" for the one cluster of a block without cluster blocks
	ctrl       *watch.Controller
	sink       *clusterSink // nil for the unnamed cluster, which feeds the index directly
	emitEvents bool
	// events emits Kubernetes Events into this cluster while it runs.
	events atomic.Pointer[watch.Events]
	stopCh chan struct{} // closed to stop the health watch
	done   chan struct{} // closed when the health watch has stopped
}

// newCluster makes the cluster name with its controller on api, which puts
// its records into out.
func newCluster(name string, cfg watch.Config, api watch.API, out watch.Sink, emitEvents bool) *cluster {
	cl := &cluster{name: name, emitEvents: emitEvents}
	if name != "" {
		cfg.Prefix = name + "/"
		cfg.Cluster = name
		cl.sink = newClusterSink(cfg.Prefix, out)
		out = cl.sink
	}
	cl.ctrl = watch.New(cfg, api, out)
	return cl
}

// fleet is the set of clusters a plugin reads.
type fleet struct {
	mu      sync.RWMutex
	members []*cluster
	byName  map[string]*cluster
}

func (f *fleet) add(cl *cluster) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byName == nil {
		f.byName = map[string]*cluster{}
	}
	f.members = append(f.members, cl)
	f.byName[cl.name] = cl
}

// remove takes the cluster name out of the fleet and returns it, or nil.
func (f *fleet) remove(name string) *cluster {
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

// list returns the clusters, in the order they were added.
func (f *fleet) list() []*cluster {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return append([]*cluster(nil), f.members...)
}

// of returns the cluster an index key belongs to and the key without the
// cluster's prefix ("Kind/namespace/name"), or nil. Keys of named clusters
// start with "<cluster>/"; a cluster name is lower case, a kind is not.
func (f *fleet) of(key string) (*cluster, string) {
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

// healthTiming is how a named cluster's contact with its API server is
// watched: checked every interval, reported after unreachableAfter.
type healthTiming struct {
	every, unreachableAfter time.Duration
}

// start starts the cluster's controller, its Events and its health watch.
func (cl *cluster) start(h healthTiming) error {
	if cl.emitEvents {
		ev, err := cl.ctrl.Events()
		if err != nil {
			return err
		}
		if ev != nil {
			cl.events.Store(ev)
		}
	}
	cl.ctrl.Start()
	if cl.name != "" {
		cl.stopCh, cl.done = make(chan struct{}), make(chan struct{})
		go cl.watchHealth(h)
	}
	return nil
}

// stop stops what start started.
func (cl *cluster) stop() {
	cl.ctrl.Stop()
	if cl.stopCh != nil {
		close(cl.stopCh)
		<-cl.done
		cl.stopCh = nil
	}
	if e := cl.events.Swap(nil); e != nil {
		e.Stop()
	}
}
