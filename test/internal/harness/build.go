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
