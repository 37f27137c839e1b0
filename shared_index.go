package gateway

import (
	"sync"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// The blocks that read one cluster, such as the views of a split horizon,
// give their indexes one index.Shared: the numbers of the objects and names
// they index, the objects' keys and claims, and the records the views agree
// on are kept once. Each block keeps its own names, nodes, snapshots and
// serials. The cluster is the block's kubeconfig and context as written
// (the in-cluster account when empty); blocks that name one cluster two
// ways only share less. Sharing never changes what a block answers.
var sharedIndexes = struct {
	mu sync.Mutex
	m  map[string]*sharedIndex
}{m: map[string]*sharedIndex{}}

// sharedIndex is the Shared of one cluster and the blocks that use it.
type sharedIndex struct {
	shared *index.Shared
	users  int
}

// acquireShared returns the Shared of the block's cluster, counting the
// block among its users until releaseShared.
func (g *Gateway) acquireShared() *index.Shared {
	g.sharedKey = g.kubeconfig + "\x00" + g.kubecontext
	sharedIndexes.mu.Lock()
	defer sharedIndexes.mu.Unlock()
	s := sharedIndexes.m[g.sharedKey]
	if s == nil {
		s = &sharedIndex{shared: index.NewShared()}
		sharedIndexes.m[g.sharedKey] = s
	}
	s.users++
	g.sharedHeld = true
	return s.shared
}

// releaseShared ends the block's use of its cluster's Shared; its indexes
// are closed (and gave their objects back) by then.
func (g *Gateway) releaseShared() {
	if !g.sharedHeld {
		return
	}
	g.sharedHeld = false
	sharedIndexes.mu.Lock()
	defer sharedIndexes.mu.Unlock()
	if s := sharedIndexes.m[g.sharedKey]; s != nil {
		if s.users--; s.users <= 0 {
			delete(sharedIndexes.m, g.sharedKey)
		}
	}
}
