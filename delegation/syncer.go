package delegation

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
	"github.com/seed-e581d630/k8s_gateway/internal/plog"
)

var parentUpdates = metrics.CounterVec("parent_updates_total",
	"Counter of the updates of the zones' delegations in the parent (the parent option), by zone and result (changed, unchanged, error).",
	"zone", "result")

// Syncer keeps the delegations of a block's forward zones current in the
// parent, as the zones answer them: at each Kick (a zone changed), and
// every resync.
type Syncer struct {
	parent Parent
	ttl    uint32
	zones  []string
	ns     func(zone string) []dns.RR
	snap   func() *index.Snapshot
	// kick wakes the syncer; resync is how often it writes anyway.
	kick   chan struct{}
	resync time.Duration
}

// NewSyncer returns the syncer of the delegations of zones in parent,
// written with ttl. ns returns a zone's NS RRset; snapshot returns what the
// zones answer, nil until they are published (the delegation waits).
func NewSyncer(parent Parent, ttl uint32, zones []string, ns func(zone string) []dns.RR, snapshot func() *index.Snapshot) *Syncer {
	return &Syncer{parent: parent, ttl: ttl, zones: zones, ns: ns, snap: snapshot, kick: make(chan struct{}, 1), resync: 5 * time.Minute}
}

// Kick asks the syncer to check the delegations (after a change of a zone).
func (s *Syncer) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run keeps the delegations current until stop. Failures are retried with
// a backoff of 1 s doubling to 1 min, and logged once per change of error.
func (s *Syncer) Run(stop <-chan struct{}) {
	backoff := time.Duration(0)
	lastErr := ""
	timer := time.NewTimer(s.resync)
	defer timer.Stop()
	for {
		select {
		case <-stop:
			return
		case <-s.kick:
		case <-timer.C:
		}
		err := s.sync(stop)
		switch {
		case errors.Is(err, errNotPublished):
			timer.Reset(time.Second)
		case err == nil:
			backoff, lastErr = 0, ""
			timer.Reset(s.resync)
		default:
			if err.Error() != lastErr {
				plog.Log.Warningf("parent: %v", err)
				lastErr = err.Error()
			}
			backoff = min(max(2*backoff, time.Second), time.Minute)
			timer.Reset(backoff)
		}
	}
}

// errNotPublished: the zones are not published yet; the delegation waits.
var errNotPublished = errors.New("the zones are not published yet")

// sync writes the delegation of every forward zone. A zone whose
// nameserver names below the cut have no address yet is skipped: a
// delegation without its glue would be lame.
func (s *Syncer) sync(stop <-chan struct{}) error {
	snap := s.snap()
	if snap == nil {
		return errNotPublished
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	var errs []error
	for zi, zone := range s.zones {
		if !s.delegated(zone) {
			continue
		}
		want, missing := s.want(snap, zi)
		if missing != "" {
			errs = append(errs, errors.New("zone "+zone+": no address for the nameserver "+missing+" yet: the delegation waits"))
			continue
		}
		for attempt := 0; ; attempt++ {
			res, err := s.parent.sync(ctx, want)
			if errors.Is(err, errRace) && attempt < 3 {
				continue
			}
			switch {
			case err != nil:
				parentUpdates.WithLabelValues(zone, "error").Inc()
				errs = append(errs, err)
			case res.Added+res.Removed > 0:
				parentUpdates.WithLabelValues(zone, "changed").Inc()
				plog.Log.Infof("parent: delegation of %s: %d records added, %d removed at %s", zone, res.Added, res.Removed, s.parent.Addr)
			default:
				parentUpdates.WithLabelValues(zone, "unchanged").Inc()
			}
			break
		}
	}
	return errors.Join(errs...)
}

// delegated reports whether the parent holds the delegation of zone: not
// of a reverse zone (delegated by its address's owner), nor of a zone
// nested in another zone of the block (which holds its delegation).
func (s *Syncer) delegated(zone string) bool { return delegated(s.zones, zone) }

// delegated reports whether the parent holds the delegation of zone, one
// of zones (see Syncer.delegated).
func delegated(zones []string, zone string) bool {
	if strings.HasSuffix(zone, ".arpa.") {
		return false
	}
	for _, z := range zones {
		if z != zone && dns.IsSubDomain(z, zone) {
			return false
		}
	}
	return true
}

// want returns the delegation of zone zi as the snapshot answers it: the NS
// names, and the addresses of those at or below the zone. missing names a
// nameserver below the cut without addresses.
func (s *Syncer) want(snap *index.Snapshot, zi int) (w zoneCut, missing string) {
	zone := s.zones[zi]
	w = zoneCut{zone: zone, glue: map[string][]netip.Addr{}, ttl: s.ttl}
	for _, rr := range s.ns(zone) {
		ns := rr.(*dns.NS).Ns
		w.nameservers = append(w.nameservers, ns)
		if !dns.IsSubDomain(zone, ns) {
			continue
		}
		for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
			answer, _, _, _ := snap.Lookup(zi, ns, qtype)
			for _, a := range answer {
				switch a := a.(type) {
				case *dns.A:
					addr, _ := netip.AddrFromSlice(a.A.To4())
					w.glue[ns] = append(w.glue[ns], addr)
				case *dns.AAAA:
					addr, _ := netip.AddrFromSlice(a.AAAA)
					w.glue[ns] = append(w.glue[ns], addr)
				}
			}
		}
		if len(w.glue[ns]) == 0 {
			return w, ns
		}
	}
	return w, ""
}
