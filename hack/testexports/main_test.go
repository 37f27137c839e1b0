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

// TestFindEveryPackage: with no directory given, every package is checked
// but commands and test support packages, the root's names written
// "(root).Name"; the plugin's handler and interface methods are not listed.
func TestFindEveryPackage(t *testing.T) {
	t.Chdir("testdata/mod")
	files := parseModule()
	if got, want := packages(files), []string{".", "app", "lib"}; !slices.Equal(got, want) {
		t.Errorf("packages = %q, want %q", got, want)
	}
	got := find(files, packages(files))
	want := []string{
		"(root).Gateway.Fall", // a field only the root's test sets
		"(root).OnlyOwnTests", // a function only the root's test calls
		"lib.Config.Inspect",
		"lib.Config.TestSeam",
		"lib.OnlyTests",
	}
	if !slices.Equal(got, want) {
		t.Errorf("find:\n got %q\nwant %q", got, want)
	}
}

// TestBaseline: the baseline may only shrink. A name found that it does
// not list is new; a line that names nothing found is stale, and -prune
// removes exactly those lines.
func TestBaseline(t *testing.T) {
	text := "# comment\n\nlib.Kept\nlib.Gone\n  lib.Other  \n# lib.Commented\n"
	names := baselineNames(text)
	if want := []string{"lib.Kept", "lib.Gone", "lib.Other"}; !slices.Equal(names, want) {
		t.Errorf("baselineNames = %q, want %q", names, want)
	}
	unlisted, stale := compare([]string{"lib.Kept", "lib.New", "lib.Other"}, names)
	if want := []string{"lib.New"}; !slices.Equal(unlisted, want) {
		t.Errorf("unlisted = %q, want %q", unlisted, want)
	}
	if want := []string{"lib.Gone"}; !slices.Equal(stale, want) {
		t.Errorf("stale = %q, want %q", stale, want)
	}
	if got, want := without(text, stale), "# comment\n\nlib.Kept\n  lib.Other  \n# lib.Commented\n"; got != want {
		t.Errorf("without = %q, want %q", got, want)
	}
	if unlisted, stale := compare([]string{"lib.Kept"}, []string{"lib.Kept"}); unlisted != nil || stale != nil {
		t.Errorf("an exact baseline: unlisted %q, stale %q", unlisted, stale)
	}
}
