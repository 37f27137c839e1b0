package metrics

import "sync"

// LiveSet holds what a metrics collector reads at scrape time: entries added
// while something runs (an informer, a plugin instance) and removed when it
// stops. The zero value is ready to use.
type LiveSet[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

// Add puts k with v in the set until the returned function is called.
func (s *LiveSet[K, V]) Add(k K, v V) (remove func()) {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[K]V{}
	}
	s.m[k] = v
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.m, k)
		s.mu.Unlock()
	}
}

// Each calls f for every entry, holding the set's lock.
func (s *LiveSet[K, V]) Each(f func(K, V)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.m {
		f(k, v)
	}
}
