package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every tool version pinned in hack/*.sh (NAME_VERSION=vX.Y.Z, and the
// table of hack/gotool.sh) is one that renovate.json's custom managers find,
// with the version the script pins: a pin Renovate does not see is never
// updated.

var (
	scriptPin = regexp.MustCompile(`(?m)^([A-Z0-9_]+_VERSION)=(v[^\s#]+)`)
	toolPin   = regexp.MustCompile(`(?m)^\s*"([a-z-]+)\s+([a-z0-9./-]+)\s+(v[^\s"]+)\s`)
)

func TestRenovateSeesEveryPin(t *testing.T) {
	b, err := os.ReadFile("renovate.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		CustomManagers []struct {
			Patterns     []string `json:"managerFilePatterns"`
			MatchStrings []string `json:"matchStrings"`
			DepName      string   `json:"depNameTemplate"`
			Datasource   string   `json:"datasourceTemplate"`
		} `json:"customManagers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("renovate.json: %v", err)
	}
	scripts, err := filepath.Glob("hack/*.sh")
	if err != nil {
		t.Fatal(err)
	}
	pins := 0
	for _, script := range scripts {
		text, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		// What Renovate finds in this file: version -> dependency names.
		found := map[string][]string{}
		for _, m := range cfg.CustomManagers {
			applies := false
			for _, p := range m.Patterns {
				re, err := regexp.Compile(strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/"))
				if err != nil {
					t.Fatalf("renovate.json: pattern %q: %v", p, err)
				}
				applies = applies || re.MatchString(script)
			}
			if !applies {
				continue
			}
			for _, ms := range m.MatchStrings {
				re, err := regexp.Compile(ms)
				if err != nil {
					t.Fatalf("renovate.json: matchString %q: %v", ms, err)
				}
				for _, sub := range re.FindAllStringSubmatch(string(text), -1) {
					dep, value := m.DepName, sub[re.SubexpIndex("currentValue")]
					if i := re.SubexpIndex("depName"); i > 0 {
						dep = sub[i]
					}
					if dep == "" || m.Datasource != "go" {
						t.Errorf("renovate.json: a manager of %s finds %s without a Go module name (depName %q, datasource %q)", script, value, dep, m.Datasource)
					}
					found[value] = append(found[value], dep)
				}
			}
		}
		check := func(what, version string) {
			pins++
			if deps := found[version]; len(deps) != 1 {
				t.Errorf("%s: %s=%s: renovate.json's custom managers find it %d times (%v), want once", script, what, version, len(deps), deps)
			}
		}
		for _, m := range scriptPin.FindAllStringSubmatch(string(text), -1) {
			check(m[1], m[2])
		}
		for _, m := range toolPin.FindAllStringSubmatch(string(text), -1) {
			check(m[1]+" "+m[2], m[3])
		}
	}
	if pins < 10 {
		t.Fatalf("found %d pins in hack/*.sh: the patterns of this test no longer match the scripts", pins)
	}
}
