package index

import "testing"

// TestAcquireShared: the users of one key share one Shared until the last
// releases it; other keys have their own; a second release changes nothing.
func TestAcquireShared(t *testing.T) {
	a, releaseA := AcquireShared("test/registry/a")
	b, releaseB := AcquireShared("test/registry/a")
	other, releaseOther := AcquireShared("test/registry/b")
	defer releaseOther()
	if a != b {
		t.Fatal("two users of one key got two Shareds")
	}
	if other == a {
		t.Fatal("two keys got one Shared")
	}
	releaseA()
	releaseA() // counted once
	c, releaseC := AcquireShared("test/registry/a")
	if c != a {
		t.Fatal("a key still in use got a new Shared")
	}
	releaseB()
	releaseC()
	d, releaseD := AcquireShared("test/registry/a")
	defer releaseD()
	if d == a {
		t.Fatal("a key no longer in use kept its Shared")
	}
}
