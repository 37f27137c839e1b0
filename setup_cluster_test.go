package gateway

import (
	"reflect"
	"testing"

	"github.com/coredns/caddy"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// k8sClusterView is what a cluster block gives, with the block's defaults applied.
type k8sClusterView struct {
	Name, Subdomain, Kubeconfig, Kubecontext string
	Zones                                    []string
	Resources, Namespaces                    []string
	LabelSelector                            string
	Selectors                                map[string][]string
	Delegations                              map[string][]string
	Events                                   bool
}

func TestParseClusters(t *testing.T) {
	kc := testutil.Kubeconfig(t)
	tests := []struct {
		name     string
		corefile string
		want     []k8sClusterView
		err      []string // substrings of the error, the first being "Testfile:LINE"
	}{
		{
			name: "two clusters, multi-line and one-line blocks",
			corefile: "k8s_gateway example.com {\n resources Ingress Service\n namespaces apps\n cluster prod {\n  kubeconfig " + kc + " one\n }\n" +
				" cluster stage { kubeconfig " + kc + " two }\n}",
			want: []k8sClusterView{
				{Name: "prod", Kubeconfig: kc, Kubecontext: "one", Zones: []string{"example.com."}, Resources: []string{"Ingress", "Service"}, Namespaces: []string{"apps"}, Selectors: map[string][]string{}, Delegations: map[string][]string{}},
				{Name: "stage", Kubeconfig: kc, Kubecontext: "two", Zones: []string{"example.com."}, Resources: []string{"Ingress", "Service"}, Namespaces: []string{"apps"}, Selectors: map[string][]string{}, Delegations: map[string][]string{}},
			},
		},
		{
			name: "the block's options after the cluster blocks are still their defaults",
			corefile: "k8s_gateway example.com {\n cluster prod {\n  kubeconfig " + kc + "\n  resources Service\n  subdomain\n  events\n }\n" +
				" cluster lab {\n  subdomain dev\n  serviceLabelSelectors a=b\n  delegate team t.example.com\n }\n labelSelector x=y\n delegate ops o.example.com\n}",
			want: []k8sClusterView{
				{Name: "prod", Subdomain: "prod", Kubeconfig: kc, Zones: []string{"prod.example.com."}, Resources: []string{"Service"}, LabelSelector: "x=y", Selectors: map[string][]string{}, Delegations: map[string][]string{"ops": {"o.example.com."}}, Events: true},
				{Name: "lab", Subdomain: "dev", Zones: []string{"dev.example.com."}, Resources: source.SupportedKinds(), LabelSelector: "x=y", Selectors: map[string][]string{"Service": {"a=b"}},
					Delegations: map[string][]string{"ops": {"o.example.com."}, "team": {"t.example.com."}}},
			},
		},
		{
			name:     "a subdomain keeps the reverse zones",
			corefile: "k8s_gateway example.com 192.0.2.0/24 {\n cluster a {\n  subdomain\n }\n}",
			want:     []k8sClusterView{{Name: "a", Subdomain: "a", Zones: []string{"a.example.com.", "2.0.192.in-addr.arpa."}, Resources: source.SupportedKinds(), Selectors: map[string][]string{}, Delegations: map[string][]string{}}},
		},
		{name: "no name", corefile: "k8s_gateway example.com {\n cluster\n}", err: []string{"Testfile:2", "cluster NAME"}},
		{name: "upper-case name", corefile: "k8s_gateway example.com {\n cluster Prod\n}", err: []string{"Testfile:2", "lower-case DNS label"}},
		{name: "a slash in the name", corefile: "k8s_gateway example.com {\n cluster a/b\n}", err: []string{"Testfile:2", "lower-case DNS label"}},
		{name: "twice", corefile: "k8s_gateway example.com {\n cluster a\n cluster a\n}", err: []string{"Testfile:3", `"a" is named twice`}},
		{name: "no brace", corefile: "k8s_gateway example.com {\n cluster a b\n}", err: []string{"Testfile:2", "wrong number of arguments"}},
		{name: "unknown option", corefile: "k8s_gateway example.com {\n cluster a {\n  ttl 5\n }\n}", err: []string{"Testfile:3", "cluster a", `unknown property "ttl"`}},
		{name: "bad option", corefile: "k8s_gateway example.com {\n cluster a {\n\n  kubeconfig /nonexistent\n }\n}", err: []string{"Testfile:4", "cluster a", "kubeconfig"}},
		{name: "bad subdomain", corefile: "k8s_gateway example.com {\n cluster a {\n  subdomain x.y\n }\n}", err: []string{"Testfile:3", "subdomain"}},
		{name: "nested block", corefile: "k8s_gateway example.com {\n cluster a {\n  b {\n  }\n }\n}", err: []string{"Testfile:3", "cannot nest"}},
		{name: "not closed", corefile: "k8s_gateway example.com {\n cluster a {\n  events\n", err: []string{"missing }"}},
		{
			name:     "the block's kubeconfig beside cluster blocks",
			corefile: "k8s_gateway example.com {\n cluster a\n kubeconfig " + kc + "\n}",
			err:      []string{"Testfile:3", "each cluster block names its own kubeconfig"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := parseCase(t, caddy.NewTestController("dns", tc.corefile), tc.err)
			if g == nil {
				return
			}
			var got []k8sClusterView
			for _, s := range g.clusters {
				o := s.resolved(g.clusterOptions)
				got = append(got, k8sClusterView{
					Name: s.name, Subdomain: s.subdomain, Kubeconfig: o.kubeconfig, Kubecontext: o.kubecontext, Zones: s.zones(g.Zones),
					Resources: o.resources, Namespaces: o.namespaces, LabelSelector: o.labelSelector, Selectors: o.labelSelectors,
					Delegations: o.delegations, Events: o.emitEvents,
				})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("clusters\n\t%+v\nwant\n\t%+v", got, tc.want)
			}
		})
	}
}

// TestIndexDomains: the delegate option names a namespace of every cluster
// in the block, of one cluster in a cluster block.
func TestIndexDomains(t *testing.T) {
	g, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n delegate ops o.example.com\n cluster a {\n  delegate team t.example.com\n }\n cluster b\n}"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"a/ops": {"o.example.com."}, "a/team": {"t.example.com."}, "b/ops": {"o.example.com."}}
	if got := g.indexDomains(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestParseClusterAPI: clusterapi takes namespaces, and lets the block's
// kubeconfig name the management cluster beside cluster blocks.
func TestParseClusterAPI(t *testing.T) {
	kc := testutil.Kubeconfig(t)
	g, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n kubeconfig "+kc+" two\n clusterapi fleet ops\n cluster a\n}"))
	if err != nil {
		t.Fatal(err)
	}
	if g.clusterAPI == nil || !reflect.DeepEqual(g.clusterAPI.namespaces, []string{"fleet", "ops"}) || g.kubecontext != "two" {
		t.Errorf("clusterapi %+v, kubecontext %q", g.clusterAPI, g.kubecontext)
	}
	if g, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n clusterapi\n}")); err != nil || g.clusterAPI == nil || len(g.clusterAPI.namespaces) != 0 {
		t.Errorf("clusterapi without namespaces: %v", err)
	}
}
