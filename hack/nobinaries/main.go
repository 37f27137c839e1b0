// Command nobinaries fails when the repository tracks a compiled file: an
// executable or object in a format of a machine (ELF, Mach-O, PE, WebAssembly)
// or an archive of objects, whatever its mode, or a file with the executable
// bit that does not start with "#!" (an executable that is not a script).
// Build outputs belong in .gitignore, not in git.
//
// Usage: go run ./hack/nobinaries   (run by make lint, in the repository root)
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	bad, err := compiled(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "nobinaries:", err)
		os.Exit(2)
	}
	for _, b := range bad {
		fmt.Fprintln(os.Stderr, b)
	}
	if len(bad) > 0 {
		fmt.Fprintln(os.Stderr, "nobinaries: compiled files are tracked: git rm --cached them and list them in .gitignore")
		os.Exit(1)
	}
}

// compiled returns a line for each compiled file the repository in dir tracks.
func compiled(dir string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-s", "-z")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	return check(dir, parseIndex(out))
}

// entry is a tracked file: its path and whether git records it executable.
type entry struct {
	path string
	exec bool
}

// parseIndex reads the output of git ls-files -s -z: "MODE OBJECT STAGE\tPATH\x00".
func parseIndex(out []byte) []entry {
	var entries []entry
	for _, rec := range strings.Split(string(out), "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		mode, _, _ := strings.Cut(meta, " ")
		if mode == "120000" || mode == "160000" { // a symlink, a submodule
			continue
		}
		entries = append(entries, entry{path: p, exec: mode == "100755"})
	}
	return entries
}

// magics are the first bytes of compiled files.
var magics = []struct {
	prefix []byte
	what   string
}{
	{[]byte("\x7fELF"), "an ELF file"},
	{[]byte{0xfe, 0xed, 0xfa, 0xce}, "a Mach-O file"},
	{[]byte{0xfe, 0xed, 0xfa, 0xcf}, "a Mach-O file"},
	{[]byte{0xce, 0xfa, 0xed, 0xfe}, "a Mach-O file"},
	{[]byte{0xcf, 0xfa, 0xed, 0xfe}, "a Mach-O file"},
	{[]byte{0xca, 0xfe, 0xba, 0xbe}, "a universal Mach-O file"},
	{[]byte("MZ"), "a PE (Windows) file"},
	{[]byte("\x00asm"), "a WebAssembly module"},
	{[]byte("!<arch>\n"), "an archive of objects"},
}

// check returns a line for each entry that is a compiled file.
func check(dir string, entries []entry) ([]string, error) {
	var bad []string
	for _, e := range entries {
		f, err := os.Open(filepath.Join(dir, e.path))
		if os.IsNotExist(err) {
			continue // deleted in the work tree: git rm shows it
		}
		if err != nil {
			return nil, err
		}
		head := make([]byte, 8)
		n, err := io.ReadFull(f, head)
		f.Close()
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return nil, fmt.Errorf("%s: %w", e.path, err)
		}
		if why := kind(head[:n], e.exec); why != "" {
			bad = append(bad, e.path+": "+why)
		}
	}
	return bad, nil
}

// kind says what compiled file head starts, or "".
func kind(head []byte, executable bool) string {
	for _, m := range magics {
		if bytes.HasPrefix(head, m.prefix) {
			return m.what
		}
	}
	if executable && !bytes.HasPrefix(head, []byte("#!")) {
		return "executable but not a script (no #! line)"
	}
	return ""
}
