package watch

import (
	golog "log"
	"os"
	"strings"
	"testing"
)

// TestWarningsOncePerProcess: two blocks reading one object log its warning
// once; a change of the warning is logged again, once; after both let go
// (the object fixed, or the blocks stopped), it is logged again when it comes back.
func TestWarningsOncePerProcess(t *testing.T) {
	var out lockedBuffer
	golog.SetOutput(&out)
	defer golog.SetOutput(os.Stderr)
	count := func(text string) int { return strings.Count(strings.Join(out.lines(), "\n"), text) }
	a := &publisher{warnings: map[string]string{}}
	b := &publisher{warnings: map[string]string{}}
	bad := []string{`status.addresses: "gw-1" of type NamedAddress ignored`}
	worse := []string{`status.addresses: "gw-2" of type NamedAddress ignored`}

	a.logWarnings("ns/gw", bad)
	b.logWarnings("ns/gw", bad)
	a.logWarnings("ns/gw", bad)
	if n := count(`"gw-1"`); n != 1 {
		t.Fatalf("logged %d times by two blocks, want once", n)
	}
	a.logWarnings("ns/gw", worse)
	b.logWarnings("ns/gw", worse)
	if n := count(`"gw-2"`); n != 1 {
		t.Fatalf("the changed warning logged %d times, want once", n)
	}
	a.logWarnings("ns/gw", nil)
	b.releaseWarnings()
	a.logWarnings("ns/gw", worse)
	if n := count(`"gw-2"`); n != 2 {
		t.Fatalf("after both let go, the warning logged %d times in all, want twice", n)
	}
	a.releaseWarnings()
	if len(loggedWarnings.held) != 0 {
		t.Errorf("lines still held: %v", loggedWarnings.held)
	}
}
