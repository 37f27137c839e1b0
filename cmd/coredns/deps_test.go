package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoTypedClients: the binary reads the API through REST clients on
// a scheme of only the kinds it reads. client-go's clientset and typed
// informers register every API group, which costs about 20 MB of binary and
// 10 MiB of resident memory; a package that pulls them in (dynamicinformer
// does) must not come back unnoticed. Nor do the API types of k8s.io/api:
// the informers decode the built-in kinds into types of the plugin, and
// core/v1 alone is 4 MB of binary (client-go's event recorder and tools
// that take typed objects link it).
//
// Nor does MaxMind's MMDB writer, a tool of the tests.
func TestLinksNoTypedClients(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case pkg == "k8s.io/client-go/kubernetes", pkg == "k8s.io/client-go/informers", strings.HasPrefix(pkg, "k8s.io/api/"):
			t.Errorf("the binary links %s", pkg)
		case strings.HasPrefix(pkg, "github.com/maxmind/"):
			// The writer of the tests' MMDB (test/mmdb) stays out of the binary.
			t.Errorf("the binary links %s", pkg)
		}
	}
}
