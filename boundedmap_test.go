package gateway

import (
	"fmt"
	"testing"
)

func TestBoundedMapForgetsTheOldest(t *testing.T) {
	m := newBoundedMap[string, int](3)
	for i, k := range []string{"a", "b", "c", "b", "d", "e"} {
		m.put(k, i)
	}
	var got []string
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if v, ok := m.get(k); ok {
			got = append(got, fmt.Sprintf("%s=%d", k, v))
		}
	}
	// b was put again (updated, not moved); a and then b were the oldest.
	if want := "[c=2 d=4 e=5]"; fmt.Sprint(got) != want || m.len() != 3 {
		t.Errorf("got %v (%d entries), want %s", got, m.len(), want)
	}
}
