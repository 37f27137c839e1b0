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
// does) must not come back unnoticed.
func TestLinksNoTypedClients(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch pkg {
		case "k8s.io/client-go/kubernetes", "k8s.io/client-go/informers", "k8s.io/api/apps/v1":
			t.Errorf("the binary links %s", pkg)
		}
	}
}
