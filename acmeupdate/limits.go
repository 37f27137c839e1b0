package acmeupdate

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// rateLimit is a token bucket per namespace, perMinute updates a minute in
// bursts of at most perMinute, and one for all namespaces together (global,
// none when 0). A namespace has one rate however many keys it has.
type rateLimit struct {
	mu        sync.Mutex
	perMinute float64
	global    float64
	buckets   map[string]*bucket
	all       bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateLimit(perMinute int) *rateLimit {
	return &rateLimit{perMinute: float64(perMinute), buckets: map[string]*bucket{}}
}

// refill brings b to now at rate a minute.
func (b *bucket) refill(rate float64, now time.Time) {
	if b.last.IsZero() {
		b.tokens, b.last = rate, now
	}
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(rate, b.tokens+d.Minutes()*rate)
		b.last = now
	}
}

// allow takes a token of the namespace's bucket and of the global one, when
// both have one; else it takes none and says which is empty.
func (rl *rateLimit) allow(namespace string, now time.Time) (bool, string) {
	if rl.perMinute <= 0 {
		return true, ""
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	b, ok := rl.buckets[namespace]
	if !ok {
		b = &bucket{}
		rl.buckets[namespace] = b
	}
	b.refill(rl.perMinute, now)
	if b.tokens < 1 {
		return false, "rate limit of namespace " + namespace
	}
	if rl.global > 0 {
		rl.all.refill(rl.global, now)
		if rl.all.tokens < 1 {
			return false, "global rate limit"
		}
		rl.all.tokens--
	}
	b.tokens--
	return true, ""
}

// logLimit lets one line through a period and counts the others, which the
// next line reports: unauthenticated traffic cannot flood the log.
type logLimit struct {
	mu         sync.Mutex
	every      time.Duration
	what       string // what the suppressed lines were, for the count
	next       time.Time
	suppressed int
}

// line returns the line to log, or "" when it is suppressed.
func (l *logLimit) line(now time.Time, format string, args ...any) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Before(l.next) {
		l.suppressed++
		return ""
	}
	l.next = now.Add(l.every)
	s := fmt.Sprintf(format, args...)
	if l.suppressed > 0 {
		s += fmt.Sprintf(" (and %d more %s since the last line)", l.suppressed, l.what)
		l.suppressed = 0
	}
	return s
}

// nameLocks serialises the updates of one owner name (prerequisites see the
// last update of the names they name), and only those: no lock is shared by
// all updates, so a slow API call of one name holds no other name.
type nameLocks struct {
	mu   sync.Mutex
	held map[string]*nameLock
}

type nameLock struct {
	mu    sync.Mutex
	users int
}

// lock takes the locks of names, in order (no deadlock between two updates),
// and returns the function that gives them back.
func (nl *nameLocks) lock(names []string) func() {
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	locks := make([]*nameLock, len(names))
	nl.mu.Lock()
	if nl.held == nil {
		nl.held = map[string]*nameLock{}
	}
	for i, n := range names {
		l, ok := nl.held[n]
		if !ok {
			l = &nameLock{}
			nl.held[n] = l
		}
		l.users++
		locks[i] = l
	}
	nl.mu.Unlock()
	for _, l := range locks {
		l.mu.Lock()
	}
	return func() {
		for _, l := range locks {
			l.mu.Unlock()
		}
		nl.mu.Lock()
		for i, n := range names {
			if locks[i].users--; locks[i].users == 0 {
				delete(nl.held, n)
			}
		}
		nl.mu.Unlock()
	}
}
