package index

import "sync"

// The blocks that read one cluster, such as the views of a split horizon,
// give their indexes one Shared: the numbers of the objects and names they
// index, the objects' keys and claims, the records the views agree on and
// the nodes of their names are kept once. Each block keeps its own
// snapshots and serials. The registry finds the Shared of a cluster by a key the caller
// makes of it (the plugin: the kubeconfig and context as written, so blocks
// that name one cluster two ways only share less). Sharing never changes
// what an index answers.
var registry = struct {
	mu sync.Mutex
	m  map[string]*registered
}{m: map[string]*registered{}}

// registered is the Shared of one key and how many hold it.
type registered struct {
	shared *Shared
	users  int
}

// AcquireShared returns the Shared of key, made on first use, and the
// function that ends this use of it; once the last use ends, the next
// AcquireShared of key makes a new one. The indexes using it should be
// closed (and have given their objects back) before release; release may
// be called more than once.
func AcquireShared(key string) (s *Shared, release func()) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	r := registry.m[key]
	if r == nil {
		r = &registered{shared: newShared()}
		registry.m[key] = r
	}
	r.users++
	var once sync.Once
	return r.shared, func() {
		once.Do(func() {
			registry.mu.Lock()
			defer registry.mu.Unlock()
			if r.users--; r.users <= 0 && registry.m[key] == r {
				delete(registry.m, key)
			}
		})
	}
}
