package main

import (
	"slices"
	"testing"
)

// TestFind runs the check on a fixture module (testdata/mod): lib's names
// and members that only tests use are listed, and nothing else.
func TestFind(t *testing.T) {
	t.Chdir("testdata/mod")
	got := find(parseModule(), []string{"lib"})
	want := []string{
		"lib.Config.Inspect",  // a method only lib's test calls
		"lib.Config.TestSeam", // a field only lib's test sets
		"lib.OnlyTests",       // a function only app's test calls
	}
	if !slices.Equal(got, want) {
		t.Errorf("find:\n got %q\nwant %q", got, want)
	}
}
