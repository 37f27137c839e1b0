package index

import (
	"slices"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// serials is the SOA serial of each zone of an index: the Unix time of its
// last change, at most one a second, announced to the Listener (for
// NOTIFY) after each publish.
//
// A second change within the same second is published at once and its new
// serial follows on the next second (a timer), so the serial never runs
// ahead of the clock and still increases across restarts.
type serials struct {
	zones     []string
	newSOA    func(zone string, serial uint32) *dns.SOA
	now       func() time.Time
	afterFunc func(d time.Duration, f func()) timer
	current   []uint32 // per zone
	pending   []bool   // zones whose data changed without a new serial
	restored  []bool   // zones whose serial came from Config.Serials, until it changes
	reissue   []bool   // zones whose serial was set (inherit) without a change: a new SOA, no announcement
	tick      timer    // bumps pending serials on the next second
	onTick    func()   // what the timer does: the index's publish of pending serials

	announceMu sync.Mutex // serializes Listener.SerialChanged calls
}

// init makes s the serials of the zones of cfg.
func (s *serials) init(cfg Config) {
	s.zones, s.newSOA, s.now, s.afterFunc = cfg.Zones, cfg.SOA, cfg.Now, cfg.afterFunc
	s.current = make([]uint32, len(cfg.Zones))
	s.pending, s.restored, s.reissue = make([]bool, len(cfg.Zones)), make([]bool, len(cfg.Zones)), make([]bool, len(cfg.Zones))
	if s.now == nil {
		s.now = time.Now
	}
	if s.afterFunc == nil {
		s.afterFunc = func(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }
	}
	now := uint32(s.now().Unix())
	for i := range cfg.Zones {
		s.current[i] = now
		if i < len(cfg.Serials) && cfg.Serials[i] != 0 {
			s.current[i], s.restored[i] = cfg.Serials[i], true
		}
	}
}

// inherit gives zone zi the serial it had in the index this one replaces
// (Config.Previous): kept as it is when the content is the same, else as a
// restored serial, which the zone's new content goes past.
func (s *serials) inherit(zi int, serial uint32, same bool) {
	s.current[zi], s.pending[zi] = serial, false
	s.restored[zi], s.reissue[zi] = !same, same
}

// next gives the zones that changed new serials and returns the zones'
// states with them, and the zones whose serial changed; it clears changed.
// Zones to reissue get their serial's SOA without an announcement.
// With force, every changed zone gets a new serial now (max(serial+1,
// time)).
func (s *serials) next(zones []zoneState, changed []bool, force bool) ([]zoneState, []int) {
	var notify []int
	now := uint32(s.now().Unix())
	for zi, c := range changed {
		if !c {
			continue
		}
		changed[zi] = false
		switch {
		case SerialLess(s.current[zi], now):
			s.current[zi] = now
		case force || s.restored[zi]:
			// A restored serial may be the clock's time or later: the
			// zone's new content must never have it.
			s.current[zi]++
		default:
			s.pending[zi] = true
			s.scheduleTick()
			continue
		}
		s.pending[zi], s.restored[zi] = false, false
		notify = append(notify, zi)
	}
	reissued := slices.Contains(s.reissue, true)
	if len(notify) == 0 && !reissued {
		return zones, nil
	}
	out := make([]zoneState, len(zones))
	copy(out, zones)
	for zi, r := range s.reissue {
		if r {
			s.reissue[zi] = false
			out[zi].serial, out[zi].soa = s.current[zi], []dns.RR{s.newSOA(s.zones[zi], s.current[zi])}
		}
	}
	for _, zi := range notify {
		out[zi].serial, out[zi].soa = s.current[zi], []dns.RR{s.newSOA(s.zones[zi], s.current[zi])}
	}
	return out, notify
}

// scheduleTick arranges for pending serials to be bumped on the next second.
func (s *serials) scheduleTick() {
	if s.tick != nil {
		return
	}
	now := s.now()
	s.tick = s.afterFunc(now.Truncate(time.Second).Add(time.Second).Sub(now), s.onTick)
}

// due marks the zones whose serial is pending as changed, when the timer
// fired.
func (s *serials) due(changed []bool) {
	s.tick = nil
	for zi, p := range s.pending {
		if p {
			changed[zi] = true
		}
	}
}

// stop stops the timer.
func (s *serials) stop() {
	if s.tick != nil {
		s.tick.Stop()
		s.tick = nil
	}
}

// announce tells l of the serials of zones in snap. It runs after the
// index's lock is released, so it reports the serials of the current
// snapshot, not the writer's. Announcements are serialized, and each reads
// the snapshot only once it holds announceMu, so the last serial announced
// for a zone is always its current one even when writers race here.
func (s *serials) announce(l Listener, snap func() *Snapshot, zones []int) {
	if l == nil || len(zones) == 0 {
		return
	}
	s.announceMu.Lock()
	defer s.announceMu.Unlock()
	cur := snap()
	for _, zi := range zones {
		l.SerialChanged(s.zones[zi], cur.zones[zi].serial)
	}
}

// SerialLess reports a < b in RFC 1982 serial number arithmetic.
func SerialLess(a, b uint32) bool {
	return a != b && int32(b-a) > 0
}
