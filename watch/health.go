package watch

import (
	"strings"
	"sync"

	"github.com/miekg/dns"

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

// health is the health tracker: it holds the counts of every Service that
// has EndpointSlices, marks the claims of the objects it reads unhealthy,
// and tells the log and the hook when an object's health flips.
type health struct {
	enabled bool           // Config.Health
	prefix  string         // Config.Prefix, trimmed from the keys the hook hears of
	sources *source.Config // the sources' configuration, for the kinds' Health
	ctx     source.Context // the controller's stores
	out     Sink

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

func newHealth(cfg *Config, ctx source.Context, out Sink) *health {
	return &health{
		enabled: cfg.Health, prefix: cfg.Prefix, sources: &cfg.Sources, ctx: ctx, out: out,
		services: map[string]sliceCount{}, unhealthy: map[string]bool{},
	}
}

// backendIndex indexes Ingresses and routes by their backend Services.
const backendIndex = "backend"

// setHook sets what hears of objects (by key, without the cluster's
// prefix) whose addresses turn unhealthy or healthy again.
func (h *health) setHook(f func(key string, unhealthy bool)) {
	h.noteMu.Lock()
	h.hook = f
	h.noteMu.Unlock()
}

// service is the source.ServiceHealth of the counts.
func (h *health) service(namespace, name string) (known, healthy bool) {
	h.countsMu.RLock()
	s := h.services[namespace+"/"+name]
	h.countsMu.RUnlock()
	return s.slices > 0, s.healthy()
}

// slice applies a slice going from old to cur (either may be nil) to the
// counts of its Service, and returns the Services ("namespace/name") whose
// health flipped. The caller holds mu.
func (h *health) slice(old, cur *source.EndpointSlice) []string {
	var flipped []string
	h.countsMu.Lock()
	defer h.countsMu.Unlock()
	if old != nil && old.Service() != "" {
		if h.count(old.GetNamespace()+"/"+old.Service(), -1, old.Ready()) {
			flipped = append(flipped, old.GetNamespace()+"/"+old.Service())
		}
	}
	if cur != nil && cur.Service() != "" {
		key := cur.GetNamespace() + "/" + cur.Service()
		if h.count(key, +1, cur.Ready()) {
			if len(flipped) == 1 && flipped[0] == key {
				flipped = nil // flipped and back within the event
			} else {
				flipped = append(flipped, key)
			}
		}
	}
	return flipped
}

// count adds delta slices (ready or not) to the Service key, and reports
// whether its health flipped. The caller holds countsMu.
func (h *health) count(key string, delta int32, ready bool) bool {
	s := h.services[key]
	was := s.healthy()
	s.slices += delta
	if ready {
		s.ready += delta
	}
	if s.slices <= 0 {
		delete(h.services, key)
		s = sliceCount{}
	} else {
		h.services[key] = s
	}
	return was != s.healthy()
}

// note remembers the health an object was published with, and tells the
// hook and the log when it flipped; removed objects are forgotten.
func (h *health) note(key string, unhealthy, removed bool) {
	h.noteMu.Lock()
	defer h.noteMu.Unlock()
	if removed {
		delete(h.unhealthy, key)
		return
	}
	if h.unhealthy[key] == unhealthy {
		return
	}
	if unhealthy {
		h.unhealthy[key] = true
		log.Infof("%s: unhealthy, its addresses are withdrawn unless nothing else answers at its names", key)
	} else {
		delete(h.unhealthy, key)
		log.Infof("%s: healthy again", key)
	}
	if h.hook != nil {
		h.hook(strings.TrimPrefix(key, h.prefix), unhealthy)
	}
}

// unhealthyPart ends the key under which an Ingress or a route whose
// records differ in health publishes its unhealthy ones, marked unhealthy:
// health is a claim's, and a claim is an object key's.
const unhealthyPart = "#unhealthy"

// mark sets claim.Unhealthy for the records rrs of obj, and returns those
// left for key. An Ingress puts the records of its unhealthy hosts, a route
// those that point only at Gateways not Programmed (the kinds' Health in
// source), under key+unhealthyPart.
func (h *health) mark(w *watched, key string, obj any, claim *index.Claim, rrs []dns.RR) []dns.RR {
	parted := !w.nameserver && w.Kind.Backends != nil
	var sick func(dns.RR) bool
	if len(rrs) > 0 && !w.nameserver && w.Version.Health != nil {
		claim.Unhealthy, sick = w.Version.Health(obj, source.HealthContext{Context: h.ctx, Config: h.sources, Service: h.service})
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
		h.note(key, claim.Unhealthy || len(part) > 0, false)
	}
	if parted {
		pc := *claim
		pc.Unhealthy = true
		h.out.UpdateClaim(key+unhealthyPart, pc, part)
	}
	return rrs
}

// dropPart removes what mark put under key+unhealthyPart.
func (h *health) dropPart(w *watched, key string) {
	if h.enabled && w.Kind.Backends != nil {
		h.out.UpdateClaim(key+unhealthyPart, index.Claim{}, nil)
	}
}
