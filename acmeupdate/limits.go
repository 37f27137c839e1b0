package acmeupdate

import (
	"sync"
	"time"
)

// rateLimit is a token bucket per key: perMinute updates a minute, in bursts
// of at most perMinute.
type rateLimit struct {
	mu        sync.Mutex
	perMinute float64
	buckets   map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateLimit(perMinute int) *rateLimit {
	return &rateLimit{perMinute: float64(perMinute), buckets: map[string]*bucket{}}
}

// allow takes a token of key's bucket, if there is one.
func (rl *rateLimit) allow(key string, now time.Time) bool {
	if rl.perMinute <= 0 {
		return true
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	b, ok := rl.buckets[key]
	if !ok {
		b = &bucket{tokens: rl.perMinute, last: now}
		rl.buckets[key] = b
	}
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(rl.perMinute, b.tokens+d.Minutes()*rl.perMinute)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
