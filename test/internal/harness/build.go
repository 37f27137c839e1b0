package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Root is the repository, seen from a test package two directories below it.
func Root() (string, error) { return filepath.Abs("../..") }

// BuildCoreDNS builds the repository's coredns (cmd/coredns, k8s_gateway
// compiled in) into dir and returns the binary's path.
func BuildCoreDNS(root, dir string) (string, error) {
	bin := filepath.Join(dir, "coredns")
	build := exec.Command("go", "build", "-o", bin, "./cmd/coredns")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building coredns: %w", err)
	}
	return bin, nil
}

// Binary returns the repository and the coredns binary built from it into a
// new temporary directory (named after the suite), which cleanup removes.
func Binary(suite string) (root, bin string, cleanup func(), err error) {
	if root, err = Root(); err != nil {
		return "", "", nil, err
	}
	tmp, err := os.MkdirTemp("", "k8sgw-"+suite+"-")
	if err != nil {
		return "", "", nil, err
	}
	if bin, err = BuildCoreDNS(root, tmp); err != nil {
		os.RemoveAll(tmp)
		return "", "", nil, err
	}
	return root, bin, func() { os.RemoveAll(tmp) }, nil
}
