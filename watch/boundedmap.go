package watch

import "container/list"

// boundedMap is a map that holds at most size entries: putting one more
// forgets the one used longest ago (read or put). Not safe for concurrent use.
type boundedMap[K comparable, V any] struct {
	size  int
	m     map[K]*list.Element
	order *list.List // of *boundedEntry, most recently used first
}

type boundedEntry[K comparable, V any] struct {
	key   K
	value V
}

func newBoundedMap[K comparable, V any](size int) boundedMap[K, V] {
	return boundedMap[K, V]{size: size, m: make(map[K]*list.Element), order: list.New()}
}

func (b *boundedMap[K, V]) get(k K) (V, bool) {
	e, ok := b.m[k]
	if !ok {
		var zero V
		return zero, false
	}
	b.order.MoveToFront(e)
	return e.Value.(*boundedEntry[K, V]).value, true
}

// put sets k to v; a new key evicts the least recently used when the map is full.
func (b *boundedMap[K, V]) put(k K, v V) {
	if e, ok := b.m[k]; ok {
		e.Value.(*boundedEntry[K, V]).value = v
		b.order.MoveToFront(e)
		return
	}
	if b.order.Len() >= b.size {
		oldest := b.order.Back()
		delete(b.m, oldest.Value.(*boundedEntry[K, V]).key)
		b.order.Remove(oldest)
	}
	b.m[k] = b.order.PushFront(&boundedEntry[K, V]{k, v})
}

func (b *boundedMap[K, V]) len() int { return len(b.m) }
