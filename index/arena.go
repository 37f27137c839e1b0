package index

// ref is where a node lies in an arena, and which views hold it there: its
// chunk and its offset in the chunk in the low bits, a bit per view of the
// table (see tables.go) in the high ones.
type ref uint64

const (
	offsetBits = 18 // chunkSize is 1<<offsetBits
	chunkBits  = 30
	posBits    = offsetBits + chunkBits
	// maxViews is the number of views one table serves.
	maxViews = 64 - posBits
)

// A node never starts past the first chunkSize bytes of its chunk.
var _ [1<<offsetBits - chunkSize]struct{}

func (r ref) chunk() int  { return int(r >> offsetBits & (1<<chunkBits - 1)) }
func (r ref) offset() int { return int(r & (1<<offsetBits - 1)) }

// views returns the bits of the views that hold the node.
func (r ref) views() ref { return r >> posBits << posBits }

// viewBit returns the bit of view i (0 ≤ i < maxViews) in a ref.
func viewBit(i int) ref { return 1 << (posBits + i) }

// arena holds the nodes of a table. Its chunks are written once, by the
// writer, and only where no published node lies: a snapshot reads its nodes
// without a lock while the writer appends the next ones.
type arena struct {
	chunks [][]byte     // the chunks this table's nodes lie in; never changed once published
	w      *arenaWriter // shared by the tables made from one another
}

// arenaWriter is where the next node goes, and how much of the arena is
// garbage (nodes replaced or removed since).
type arenaWriter struct {
	chunks [][]byte
	used   int // bytes used of the last chunk
	live   int // bytes of the nodes of the newest table
	total  int // bytes written
}

func newArena() arena { return arena{w: &arenaWriter{}} }

// view returns the node at r.
func (a *arena) view(r ref) view {
	return view(a.chunks[r.chunk()][r.offset():])
}

// put appends the packed node v and returns its position and the arena the
// tables made from now on read.
func (a *arena) put(v view) (ref, arena) {
	r := a.w.place(v)
	return r, arena{chunks: a.w.chunks, w: a.w}
}

// place copies the encoded node b to the end of the arena and returns its
// position. A node larger than a chunk gets a chunk of its own.
func (w *arenaWriter) place(b []byte) ref {
	if len(w.chunks) == 0 || w.used+len(b) > len(w.chunks[len(w.chunks)-1]) {
		w.chunks = append(w.chunks, make([]byte, max(chunkSize, len(b))))
		w.used = 0
	}
	r := ref(len(w.chunks)-1)<<offsetBits | ref(w.used)
	copy(w.chunks[len(w.chunks)-1][w.used:], b)
	w.used += len(b)
	w.live += len(b)
	w.total += len(b)
	return r
}

// drop notes that the node at r is no longer in the newest table.
func (a *arena) drop(r ref) { a.w.live -= a.view(r).size() }

// garbage reports whether most of the arena is nodes no table needs any more.
func (a *arena) garbage() bool {
	return a.w.total-a.w.live > max(a.w.live, minCompact)
}
