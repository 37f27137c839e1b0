package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestCompiled runs the check on a repository of its own: the compiled
// files it tracks are listed, whatever their mode, and nothing else (scripts,
// text, untracked binaries, a tracked file deleted from the work tree).
func TestCompiled(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	files := []struct {
		path string
		mode os.FileMode
		data string
	}{
		{"coredns", 0o755, "\x7fELF\x02\x01\x01\x00rest"},  // a build output
		{"data/plugin.so", 0o644, "\x7fELF\x02\x01"},       // ELF without the x bit
		{"tool.exe", 0o644, "MZ\x90\x00"},                  // PE
		{"mac/tool", 0o755, "\xcf\xfa\xed\xfe\x07\x00"},    // Mach-O, 64 bit
		{"pkg.a", 0o644, "!<arch>\n__.PKGDEF"},             // Go archive
		{"web.wasm", 0o644, "\x00asm\x01\x00\x00\x00"},     // WebAssembly
		{"run", 0o755, "ab"},                               // executable, not a script
		{"hack/script.sh", 0o755, "#!/usr/bin/env bash\n"}, // a script
		{"main.go", 0o644, "package main\n"},               // text
		{"empty", 0o644, ""},                               // empty
		{"short", 0o644, "\x7f"},                           // shorter than any magic
		{"gone", 0o755, "\x7fELF"},                         // tracked, then deleted
	}
	for _, f := range files {
		p := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.data), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	git("add", ".")
	if err := os.Remove(filepath.Join(dir, "gone")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "untracked"), []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := compiled(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"coredns: an ELF file",
		"data/plugin.so: an ELF file",
		"mac/tool: a Mach-O file",
		"pkg.a: an archive of objects",
		"run: executable but not a script (no #! line)",
		"tool.exe: a PE (Windows) file",
		"web.wasm: a WebAssembly module",
	}
	if !slices.Equal(got, want) {
		t.Errorf("compiled:\n got %q\nwant %q", got, want)
	}
}
