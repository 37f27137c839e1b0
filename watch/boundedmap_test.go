package watch

import (
	"fmt"
	"testing"
)

func TestBoundedMapForgetsTheLeastRecentlyUsed(t *testing.T) {
	m := newBoundedMap[string, int](3)
	m.put("a", 1)
	m.put("b", 2)
	m.put("c", 3)
	m.get("a")    // a is used again: b is now the oldest
	m.put("c", 4) // an update uses c
	m.put("d", 5) // evicts b
	m.put("e", 6) // evicts a
	var got []string
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if v, ok := m.get(k); ok {
			got = append(got, fmt.Sprintf("%s=%d", k, v))
		}
	}
	if want := "[c=4 d=5 e=6]"; fmt.Sprint(got) != want || m.len() != 3 {
		t.Errorf("got %v (%d entries), want %s", got, m.len(), want)
	}
}
