package watch

import (
	"strings"
	"sync"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// The health option. A Service's health is kept as two counts, taken from
// its EndpointSlices as they come and go: its slices, and those with a
// ready endpoint. It is healthy while it has no slice (unknown is not down)
// or one of them has a ready endpoint. When that flips, the Service is
// published again, with Claim.Unhealthy set or cleared; the index then
// drops or restores its records at each name (index/health.go). Slice events
// that do not flip it cost a map lookup and nothing else.

// sliceCount is what the controller keeps per Service: 8 bytes and its key.
type sliceCount struct {
	slices, ready int32
}

func (s sliceCount) healthy() bool { return s.slices == 0 || s.ready > 0 }

// health holds the counts of every Service that has EndpointSlices.
type health struct {
	// mu is held while a count changes and the Services and Ingresses it
	// flips are published again, and while a Service or an Ingress is
	// published: a publish never gives the index a health older than the
	// last one given. Routes are serialized by the route lock instead.
	mu sync.Mutex
	// countsMu guards services, which routes read under the route lock.
	countsMu sync.RWMutex
	services map[string]sliceCount // "namespace/name" → its slices
	// noteMu guards unhealthy and hook.
	noteMu sync.Mutex
	// unhealthy are the objects, by key, last published unhealthy: for the
	// log and the Events of a flip.
	unhealthy map[string]bool
	// hook, when set, hears of objects turning unhealthy or healthy.
	hook func(key string, unhealthy bool)
}

func newHealth() *health {
	return &health{services: map[string]sliceCount{}, unhealthy: map[string]bool{}}
}

// backendIndex indexes Ingresses and routes by their backend Services.
const backendIndex = "backend"

// SetHealthHook sets what hears of objects (by key, without the cluster's
// prefix) whose addresses turn unhealthy or healthy again; for Events.
func (c *Controller) SetHealthHook(f func(key string, unhealthy bool)) {
	c.health.noteMu.Lock()
	c.health.hook = f
	c.health.noteMu.Unlock()
}

// serviceHealth is the source.ServiceHealth of the controller's counts.
func (c *Controller) serviceHealth(namespace, name string) (known, healthy bool) {
	c.health.countsMu.RLock()
	s := c.health.services[namespace+"/"+name]
	c.health.countsMu.RUnlock()
	return s.slices > 0, s.healthy()
}

// sliceHandler keeps the counts from the events of an EndpointSlice informer.
func (c *Controller) sliceHandler(w *watched) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.sliceChanged(w, nil, obj) },
		UpdateFunc: func(old, obj any) { c.sliceChanged(w, old, obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			c.sliceChanged(w, obj, nil)
		},
	}
}

// sliceChanged applies a slice going from old to cur (either may be nil)
// to the counts of its Service, and publishes the Service again when its
// health flips.
func (c *Controller) sliceChanged(w *watched, old, cur any) {
	if w.retired.Load() {
		return
	}
	c.counted(w)
	o, _ := old.(*source.EndpointSlice)
	n, _ := cur.(*source.EndpointSlice)
	ingressDependent := c.routes.dependent(source.KindByName("Ingress"))
	c.health.mu.Lock()
	var flipped []string
	c.health.countsMu.Lock()
	if o != nil && o.Service() != "" {
		if c.countSlice(o.GetNamespace()+"/"+o.Service(), -1, o.Ready()) {
			flipped = append(flipped, o.GetNamespace()+"/"+o.Service())
		}
	}
	if n != nil && n.Service() != "" {
		key := n.GetNamespace() + "/" + n.Service()
		if c.countSlice(key, +1, n.Ready()) {
			if len(flipped) == 1 && flipped[0] == key {
				flipped = nil // flipped and back within the event
			} else {
				flipped = append(flipped, key)
			}
		}
	}
	c.health.countsMu.Unlock()
	for _, key := range flipped {
		ns, name, _ := strings.Cut(key, "/")
		if sw, obj := c.stores.getObject("Service", ns, name); obj != nil {
			c.publish(sw, obj.(metav1.Object), obj)
		}
		if !ingressDependent {
			c.republishBackendUsers("Ingress", key)
		}
	}
	c.health.mu.Unlock()
	if len(flipped) == 0 {
		return
	}
	// Routes, and Ingresses under ingressClasses, are published under the
	// route lock: republished there, after the counts changed.
	c.routes.mu.Lock()
	defer c.routes.mu.Unlock()
	for _, key := range flipped {
		for _, k := range source.Kinds {
			if k.Route != nil || k.Name == "Ingress" && ingressDependent {
				c.republishBackendUsers(k.Name, key)
			}
		}
	}
}

// republishBackendUsers publishes again the objects of kind whose backends
// include the Service key.
func (c *Controller) republishBackendUsers(kind, key string) {
	for _, w := range c.stores.ofKind(kind) {
		objs, err := w.informer.GetIndexer().ByIndex(backendIndex, key)
		if err != nil {
			continue
		}
		for _, obj := range objs {
			if m, ok := obj.(metav1.Object); ok {
				c.publish(w, m, obj)
			}
		}
	}
}

// countSlice adds delta slices (ready or not) to the Service key, and
// reports whether its health flipped. The caller holds countsMu.
func (c *Controller) countSlice(key string, delta int32, ready bool) bool {
	s := c.health.services[key]
	was := s.healthy()
	s.slices += delta
	if ready {
		s.ready += delta
	}
	if s.slices <= 0 {
		delete(c.health.services, key)
		s = sliceCount{}
	} else {
		c.health.services[key] = s
	}
	return was != s.healthy()
}

// noteHealth remembers the health an object was published with, and tells
// the hook and the log when it flipped; removed objects are forgotten.
func (c *Controller) noteHealth(key string, unhealthy, removed bool) {
	c.health.noteMu.Lock()
	defer c.health.noteMu.Unlock()
	if removed {
		delete(c.health.unhealthy, key)
		return
	}
	if c.health.unhealthy[key] == unhealthy {
		return
	}
	if unhealthy {
		c.health.unhealthy[key] = true
		log.Infof("%s: unhealthy, its addresses are withdrawn unless nothing else answers at its names", key)
	} else {
		delete(c.health.unhealthy, key)
		log.Infof("%s: healthy again", key)
	}
	if c.health.hook != nil {
		c.health.hook(strings.TrimPrefix(key, c.cfg.Prefix), unhealthy)
	}
}

// UnhealthyPart ends the key under which an Ingress or a route whose
// records differ in health publishes its unhealthy ones, marked unhealthy:
// health is a claim's, and a claim is an object key's.
const UnhealthyPart = "#unhealthy"

// markHealth sets claim.Unhealthy for the records rrs of obj, and returns
// those left for key. An Ingress puts the records of its unhealthy hosts
// (see source.IngressHealth), a route those that point only at Gateways not
// Programmed (source.RouteDownRecords), under key+UnhealthyPart.
func (c *Controller) markHealth(w *watched, key string, obj any, claim *index.Claim, rrs []dns.RR) []dns.RR {
	parted := !w.Nameserver && w.Kind.Backends != nil
	var sick func(dns.RR) bool
	if len(rrs) > 0 && !w.Nameserver && w.Version.Health != nil {
		claim.Unhealthy, sick = w.Version.Health(obj, source.HealthContext{Context: c.stores, Config: &c.cfg.Sources, Service: c.serviceHealth})
	}
	var part []dns.RR
	if sick != nil {
		keep := rrs[:0:0]
		for _, rr := range rrs {
			if sick(rr) {
				part = append(part, rr)
			} else {
				keep = append(keep, rr)
			}
		}
		rrs = keep
	}
	if len(rrs)+len(part) > 0 {
		c.noteHealth(key, claim.Unhealthy || len(part) > 0, false)
	}
	if parted {
		pc := *claim
		pc.Unhealthy = true
		c.out.UpdateClaim(key+UnhealthyPart, pc, part)
	}
	return rrs
}

// dropPart removes what markHealth put under key+UnhealthyPart.
func (c *Controller) dropPart(w *watched, key string) {
	if c.cfg.Health && w.Kind.Backends != nil {
		c.out.UpdateClaim(key+UnhealthyPart, index.Claim{}, nil)
	}
}
