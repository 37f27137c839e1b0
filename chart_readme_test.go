package gateway

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestChartReadmeDefaults: the defaults of the chart README's table of
// values are values.yaml's. A row names one or more values in backticks
// ("`a`, `b`" or "`a.b` / `.c`") and, in its second column, a default in
// backticks for all of them or one per value, in the same order; a
// default written in words (or with a <placeholder>) is not compared,
// except "unset" (absent, null or empty).
func TestChartReadmeDefaults(t *testing.T) {
	b, err := os.ReadFile("charts/k8s-gateway/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("charts/k8s-gateway/README.md")
	if err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile("^`(\\.?[A-Za-z0-9.]+)`$")
	compared := 0
	for n, line := range strings.Split(string(readme), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		var keys []string
		last := ""
		for _, k := range regexp.MustCompile(` / |, `).Split(strings.TrimSpace(cells[1]), -1) {
			m := key.FindStringSubmatch(k)
			if m == nil {
				keys = nil
				break
			}
			full := m[1]
			if strings.HasPrefix(full, ".") { // `a.b` / `.c`: a sibling of the one before
				full = last[:strings.LastIndex(last, ".")] + full
			}
			keys, last = append(keys, full), full
		}
		defaults := regexp.MustCompile(` / |, `).Split(strings.TrimSpace(cells[2]), -1)
		if len(keys) == 0 || (len(defaults) != 1 && len(defaults) != len(keys)) {
			defaults = []string{strings.TrimSpace(cells[2])}
			if len(keys) > 1 {
				continue
			}
		}
		for i, k := range keys {
			d := defaults[0]
			if len(defaults) > 1 {
				d = defaults[i]
			}
			got, found := lookup(values, k)
			switch {
			case d == "unset":
				if found && got != nil && got != "" && !reflect.DeepEqual(normal(got), []any{}) && !reflect.DeepEqual(normal(got), map[string]any{}) {
					t.Errorf("charts/k8s-gateway/README.md:%d: %s: unset, values.yaml has %v", n+1, k, got)
				}
				compared++
			case strings.HasPrefix(d, "`") && strings.HasSuffix(d, "`") && strings.Count(d, "`") == 2 && !strings.Contains(d, "<"):
				var want any
				if err := yaml.Unmarshal([]byte(strings.Trim(d, "`")), &want); err != nil {
					t.Errorf("charts/k8s-gateway/README.md:%d: %s: default %s: %v", n+1, k, d, err)
					continue
				}
				if !found {
					t.Errorf("charts/k8s-gateway/README.md:%d: %s is not in values.yaml", n+1, k)
				} else if !reflect.DeepEqual(normal(got), normal(want)) {
					t.Errorf("charts/k8s-gateway/README.md:%d: %s: default %s, values.yaml has %#v", n+1, k, d, got)
				}
				compared++
			}
		}
	}
	if compared < 50 {
		t.Errorf("only %d defaults compared: is the table still there?", compared)
	}
}

// lookup returns the value at a dotted path of values.yaml.
func lookup(values map[string]any, path string) (any, bool) {
	var cur any = values
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// normal makes empty lists and maps, and nil, comparable across decoders.
func normal(v any) any {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return []any{}
		}
	case map[string]any:
		if len(x) == 0 {
			return map[string]any{}
		}
	}
	return v
}
