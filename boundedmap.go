package gateway

// boundedMap is a map that holds at most size entries: putting one more
// forgets the one put longest ago. Not safe for concurrent use.
type boundedMap[K comparable, V any] struct {
	m     map[K]V
	order []K // keys in the order they were put, a ring once full
	next  int // where the next key goes in a full ring
}

func newBoundedMap[K comparable, V any](size int) boundedMap[K, V] {
	return boundedMap[K, V]{m: make(map[K]V), order: make([]K, 0, size)}
}

func (b *boundedMap[K, V]) get(k K) (V, bool) {
	v, ok := b.m[k]
	return v, ok
}

// put sets k to v; a new key evicts the oldest when the map is full.
func (b *boundedMap[K, V]) put(k K, v V) {
	if _, ok := b.m[k]; ok {
		b.m[k] = v
		return
	}
	if len(b.order) < cap(b.order) {
		b.order = append(b.order, k)
	} else {
		delete(b.m, b.order[b.next])
		b.order[b.next] = k
		b.next = (b.next + 1) % len(b.order)
	}
	b.m[k] = v
}

func (b *boundedMap[K, V]) len() int { return len(b.m) }
