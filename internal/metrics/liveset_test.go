package metrics

import "testing"

func TestLiveSet(t *testing.T) {
	var s LiveSet[string, int]
	count := func() map[string]int {
		got := map[string]int{}
		s.Each(func(k string, v int) { got[k] = v })
		return got
	}
	removeA := s.Add("a", 1)
	removeB := s.Add("b", 2)
	if got := count(); len(got) != 2 || got["a"] != 1 || got["b"] != 2 {
		t.Fatalf("after two adds: %v", got)
	}
	removeA()
	if got := count(); len(got) != 1 || got["b"] != 2 {
		t.Fatalf("after removing a: %v", got)
	}
	removeB()
	if got := count(); len(got) != 0 {
		t.Fatalf("after removing both: %v", got)
	}
}
