package source

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestKindsMatchChart ties the kinds table to the Helm chart, so that a kind
// added here is offered by the chart's watchedResources and allowed by its RBAC
// helper, and the chart offers nothing the plugin does not read.
func TestKindsMatchChart(t *testing.T) {
	data, err := os.ReadFile("../charts/k8s-gateway/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			WatchedResources struct {
				Items struct {
					Enum []string `json:"enum"`
				} `json:"items"`
			} `json:"watchedResources"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	if got := schema.Properties.WatchedResources.Items.Enum; !slices.Equal(got, SupportedKinds()) {
		t.Errorf("values.schema.json watchedResources enum %q, the plugin reads %q", got, SupportedKinds())
	}

	tpl, err := os.ReadFile("../charts/k8s-gateway/templates/_helpers.tpl")
	if err != nil {
		t.Fatal(err)
	}
	helpers := string(tpl)
	define := func(name string) string {
		start := strings.Index(helpers, `{{- define "k8s-gateway.`+name+`" -}}`)
		if start < 0 {
			t.Fatalf("_helpers.tpl defines no %s", name)
		}
		end := strings.Index(helpers[start:], "\n{{- end }}\n\n")
		if end < 0 {
			end = len(helpers) - start
		}
		return helpers[start : start+end]
	}
	rules := define("namespacedRules")
	clusterScoped := define("clusterScopedRules")
	namespaceObject := define("namespaceObjectRules")
	var routes []string
	for _, k := range Kinds {
		group, _, found := strings.Cut(k.GroupVersion, "/")
		if !found {
			group = "" // the core group: "v1"
		}
		if k.Route != nil {
			routes = append(routes, k.Name)
			// The helper makes the resource of a route kind from its name.
			if plural := strings.ToLower(k.Name) + "s"; plural != k.Resource {
				t.Errorf("%s: the chart grants %q, the plugin reads %q", k.Name, plural, k.Resource)
			}
			if group != GatewayKind.GroupVersion[:strings.Index(GatewayKind.GroupVersion, "/")] {
				t.Errorf("%s: the chart grants routes in the Gateway API group only, not %q", k.Name, group)
			}
			continue
		}
		// A kind of its own: `has "<Kind>" $w` grants its resource in its group.
		m := regexp.MustCompile(`has "` + k.Name + `" \$w \}\}(?s:.*?)\{\{- end \}\}`).FindString(rules)
		if m == "" {
			t.Errorf("%s: namespacedRules grants nothing for it", k.Name)
			continue
		}
		if !strings.Contains(m, `"`+k.Resource+`"`) {
			t.Errorf("%s: namespacedRules does not grant %q: %s", k.Name, k.Resource, m)
		}
		if !strings.Contains(rules, `- apiGroups: ["`+group+`"]`) {
			t.Errorf("%s: namespacedRules has no rule for the group %q", k.Name, group)
		}
	}
	routeKinds := define("routeKinds")
	for _, r := range routes {
		if !strings.Contains(routeKinds, `"`+r+`"`) {
			t.Errorf("routeKinds of _helpers.tpl lacks %s", r)
		}
	}
	if n := len(regexp.MustCompile(`"[A-Za-z]+Route"`).FindAllString(routeKinds, -1)); n != len(routes) {
		t.Errorf("routeKinds of _helpers.tpl names %d kinds, the plugin has %d route kinds", n, len(routes))
	}
	// Routes need their context kinds too; what is cluster-scoped is
	// granted by the ClusterRole, the rest by the Roles of
	// filters.namespaces too, and the Namespaces read by name (byName) by
	// those Roles as well.
	for _, k := range []*Kind{GatewayKind, ListenerSetKind, NamespaceKind, IngressClassKind} {
		in, other, where := rules, clusterScoped, "namespacedRules"
		if k.Cluster {
			in, other, where = clusterScoped, rules, "clusterScopedRules"
		}
		if !strings.Contains(in, `"`+k.Resource+`"`) {
			t.Errorf("%s does not grant %s", where, k.Resource)
		}
		if strings.Contains(other, `"`+k.Resource+`"`) {
			t.Errorf("%s is granted outside %s", k.Resource, where)
		}
		if byName := strings.Contains(namespaceObject, `"`+k.Resource+`"`); byName != k.ByName {
			t.Errorf("%s: namespaceObjectRules grants it %v, the plugin reads it by name %v", k.Resource, byName, k.ByName)
		}
	}
}
