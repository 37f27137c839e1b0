package gateway

import (
	"os"
	"strings"
	"testing"

	"github.com/coredns/caddy"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// readmeSyntax returns the README's Syntax section: the option names of its
// synopsis (the first word of each line of the fenced block), and its prose.
func readmeSyntax(t *testing.T) (synopsis map[string]bool, prose string) {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Syntax\n")
	if !ok {
		t.Fatal("README.md has no Syntax section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	synopsis = map[string]bool{}
	lines := strings.Split(section, "\n")
	fenced := proseLines(section)
	for i, l := range lines {
		if f := strings.Fields(l); fenced[i] == "" && len(f) > 0 {
			synopsis[f[0]] = true
		}
	}
	return synopsis, strings.Join(fenced, "\n")
}

// TestClusterOptionsDocumented: every option of the table of cluster options
// is in the README's Syntax, in the synopsis and described in a bullet, and
// every alias is named there.
func TestClusterOptionsDocumented(t *testing.T) {
	synopsis, prose := readmeSyntax(t)
	for name := range clusterOptionTable {
		if !synopsis[name] {
			t.Errorf("option %s: not in the synopsis of the README's Syntax", name)
		}
		if !strings.Contains(prose, "`"+name+"`") {
			t.Errorf("option %s: not described in the README's Syntax", name)
		}
	}
	for alias, name := range optionAliases {
		if _, ok := clusterOptionTable[name]; !ok {
			t.Errorf("alias %s: of %s, which is not in the table", alias, name)
		}
		if !strings.Contains(prose, "`"+alias+"`") {
			t.Errorf("alias %s of %s: not named in the README's Syntax", alias, name)
		}
	}
}

// TestClusterOptionsInherited: a cluster block takes each option of the table
// that has an inherit rule from the k8s_gateway block unless it sets it, and
// never the kubeconfig.
func TestClusterOptionsInherited(t *testing.T) {
	kubeconfig := testutil.Kubeconfig(t)
	block := "k8s_gateway example.com {\n resources Service\n ingressClasses a\n gatewayClasses b\n labelSelector x=1\n" +
		" serviceLabelSelectors y=2\n namespaces n\n events\n health\n priority 3\n failover 90s\n weight 4\n location country=DE\n"
	g, err := parse(caddy.NewTestController("dns", block+" cluster a {\n  kubeconfig "+kubeconfig+"\n }\n"+
		" cluster b {\n  kubeconfig "+kubeconfig+"\n  resources Ingress\n  priority 7\n }\n}"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := g.clusters[0].resolved(g.clusterOptions), g.clusters[1].resolved(g.clusterOptions)
	want := g.clusterOptions
	switch {
	case strings.Join(a.resources, ",") != "Service", strings.Join(a.ingressClasses, ",") != "a",
		strings.Join(a.gatewayClasses, ",") != "b", a.labelSelector != "x=1", strings.Join(a.labelSelectors["Service"], "|") != "y=2",
		strings.Join(a.namespaces, ",") != "n", !a.emitEvents, !a.health, a.priority != 3,
		a.failover != want.failover, a.weight != 4, a.location != want.location:
		t.Errorf("cluster a did not inherit every option of the block: %+v", a)
	}
	if a.kubeconfig != kubeconfig {
		t.Errorf("cluster a: kubeconfig %q, want its own", a.kubeconfig)
	}
	if strings.Join(b.resources, ",") != "Ingress" || b.priority != 7 || b.weight != 4 {
		t.Errorf("cluster b: resources %v priority %d weight %d; want its own resources and priority, the block's weight", b.resources, b.priority, b.weight)
	}
}
