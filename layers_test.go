package gateway

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// The layers of the plugin, lowest first. A package may import only the
// packages of the layers below its own (and internal helpers); persist
// stands beside source and may import only index.
var layers = map[string]int{
	"index":   0,
	"source":  1,
	"persist": 1,
	// delegation: the zones' NS and glue in the parent (RFC 2136), as
	// their snapshots answer them; their CDS and CDNSKEY records.
	"delegation": 1,
	// xfr: zone transfers of index snapshots, and NOTIFY.
	"xfr": 1,
	// catalog: RFC 9432 catalog zones, built from zone names alone, and
	// transferred through xfr.
	"catalog": 2,
	"watch":   2,
	// acmeupdate: RFC 2136 updates of ACME challenges, stored through one
	// cluster's API; beside watch, it imports only index.
	"acmeupdate": 2,
	"fleet":      3,
	"":           4, // the plugin
}

// TestLayers fails when a package imports one of its own layer or above it,
// when persist imports anything of the plugin but index, or when index or
// source depend on client-go (index on any Kubernetes module at all).
func TestLayers(t *testing.T) {
	const module = "github.com/seed-e581d630/k8s_gateway"
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := map[string]bool{}
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Deps       []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		rank, ok := layers[name]
		if !ok {
			continue // commands, tests and internal helpers
		}
		seen[name] = true
		for _, imp := range p.Imports {
			dep, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if strings.HasPrefix(dep, "internal/") {
				continue
			}
			r, known := layers[dep]
			switch {
			case !known:
				t.Errorf("%s imports %s, which is in no layer", p.ImportPath, imp)
			case r >= rank:
				t.Errorf("%s (layer %d) imports %s (layer %d): imports go down only", p.ImportPath, rank, imp, r)
			case name == "persist" && dep != "index":
				t.Errorf("persist imports %s: it may import only index", imp)
			}
		}
		for _, d := range p.Deps {
			if (name == "index" || name == "source") && strings.HasPrefix(d, "k8s.io/client-go") {
				t.Errorf("%s depends on %s: sources and the index never talk to an API server", p.ImportPath, d)
			}
			if name == "index" && (strings.HasPrefix(d, "k8s.io/") || strings.HasPrefix(d, "sigs.k8s.io/")) {
				t.Errorf("index depends on %s: it has no Kubernetes imports", d)
			}
		}
	}
	for name := range layers {
		if !seen[name] {
			t.Errorf("package %q of the layers not found by go list", name)
		}
	}
}
