package index

import (
	"slices"
	"testing"
)

// TestSnapshotSizes: names with records and their records, per zone; a
// nested zone's names count in it; empty non-terminals count nowhere.
func TestSnapshotSizes(t *testing.T) {
	ix, _ := newTestIndex(t, "example.com.", "sub.example.com.", "example.org.")
	ix.Update("Service/a/www", qtRRs("www.example.com. 60 IN A 192.0.2.1", "www.example.com. 60 IN A 192.0.2.2",
		"www.example.com. 60 IN AAAA 2001:db8::1"))
	ix.Update("Service/a/deep", qtRRs("a.b.c.example.com. 60 IN A 192.0.2.3"))
	ix.Update("Service/a/sub", qtRRs("x.sub.example.com. 60 IN A 192.0.2.4"))
	ix.Flush()
	want := []ZoneSize{{Names: 2, Records: 4}, {Names: 1, Records: 1}, {}}
	if got := ix.Snapshot().Sizes(); !slices.Equal(got, want) {
		t.Errorf("Sizes() = %+v, want %+v", got, want)
	}
	ix.Update("Service/a/www", nil)
	want[0] = ZoneSize{Names: 1, Records: 1}
	if got := ix.Snapshot().Sizes(); !slices.Equal(got, want) {
		t.Errorf("after a removal: Sizes() = %+v, want %+v", got, want)
	}
}
