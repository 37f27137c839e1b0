//go:build e2e

package e2e

// Rendered manifests: parsing, the objects of a kind, the RBAC rules.

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

// chartManifest is a rendered chart: its objects in order.
type chartManifest struct {
	text string
	objs []chartObject
}

type chartObject struct {
	Kind, Name, Namespace string
	json                  []byte
}

func parseChartManifest(t *testing.T, text string) chartManifest {
	t.Helper()
	m := chartManifest{text: text}
	dec := k8syaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("parsing the rendered manifest: %v\n%s", err, text)
		}
		if len(obj) == 0 {
			continue
		}
		data, _ := json.Marshal(obj)
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name, Namespace string
			} `json:"metadata"`
		}
		json.Unmarshal(data, &meta)
		m.objs = append(m.objs, chartObject{meta.Kind, meta.Metadata.Name, meta.Metadata.Namespace, data})
	}
	return m
}

// kinds lists the objects as Kind/namespace/name, sorted.
func (m chartManifest) kinds() []string {
	var out []string
	for _, o := range m.objs {
		out = append(out, o.Kind+"/"+o.Namespace+"/"+o.Name)
	}
	slices.Sort(out)
	return out
}

// only returns the documents of the given kinds as a multi-document YAML (JSON) stream.
func (m chartManifest) only(kinds ...string) string {
	var b strings.Builder
	for _, o := range m.objs {
		if slices.Contains(kinds, o.Kind) {
			b.WriteString("---\n")
			b.Write(o.json)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// chartGet decodes the one object of kind (and name, when not empty) into T.
func chartGet[T any](t *testing.T, m chartManifest, kind, name string) T {
	t.Helper()
	var found []chartObject
	for _, o := range m.objs {
		if o.Kind == kind && (name == "" || o.Name == name) {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s %q in the chartManifest, found %d; objects: %q", kind, name, len(found), m.kinds())
	}
	var v T
	if err := json.Unmarshal(found[0].json, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// chartRuleSet flattens RBAC rules to "group/resource:verbs" strings, sorted, and
// fails on anything but plain resource rules.
func chartRuleSet(t *testing.T, rules []rbacv1.PolicyRule) []string {
	t.Helper()
	var out []string
	for _, r := range rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("unexpected rule %+v", r)
		}
		verbs := slices.Clone(r.Verbs)
		slices.Sort(verbs)
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				out = append(out, g+"/"+res+":"+strings.Join(verbs, ","))
			}
		}
	}
	slices.Sort(out)
	return out
}

func chartReadOnly(resources ...string) []string {
	var out []string
	for _, r := range resources {
		out = append(out, r+":list,watch")
	}
	slices.Sort(out)
	return out
}

// chartCheckRoles checks the Roles of a manifest: their rules by namespace
// (one Role in each), each bound to the release's ServiceAccount.
func chartCheckRoles(t *testing.T, m chartManifest, ns string, want map[string][]string) {
	t.Helper()
	got := map[string][]string{}
	for _, o := range m.objs {
		one := chartManifest{objs: []chartObject{o}}
		switch o.Kind {
		case "Role":
			r := chartGet[rbacv1.Role](t, one, "Role", "")
			got[r.Namespace] = append(got[r.Namespace], chartRuleSet(t, r.Rules)...)
		case "RoleBinding":
			b := chartGet[rbacv1.RoleBinding](t, one, "RoleBinding", "")
			if b.RoleRef.Kind != "Role" || len(b.Subjects) != 1 || b.Subjects[0] != (rbacv1.Subject{Kind: "ServiceAccount", Name: "k8s-gateway", Namespace: ns}) {
				t.Errorf("RoleBinding %s/%s %+v", b.Namespace, b.Name, b)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Role rules by namespace:\n got %q\nwant %q", got, want)
	}
}
