package persist

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCheckPersistDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := CheckDir(dir); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Fatalf("created %v, %v; want an empty directory", entries, err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	if err := CheckDir(file); err == nil {
		t.Error("a file accepted as the directory")
	}
}
