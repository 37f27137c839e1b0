package gateway

import (
	"reflect"
	"strings"
	"testing"

	"github.com/coredns/caddy"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

func TestClusterZones(t *testing.T) {
	kc := testutil.Kubeconfig(t)
	block := func(opts string) string {
		return "k8s_gateway example.com example.org 10.in-addr.arpa {\n" + opts +
			" cluster a {\n  kubeconfig " + kc + "\n  subdomain\n }\n cluster b {\n  kubeconfig " + kc + "\n  subdomain x\n }\n cluster c {\n  kubeconfig " + kc + "\n }\n}"
	}
	tests := []struct {
		name     string
		corefile string
		zones    []string // of the block, then of cluster a
		aZones   []string
		err      []string
	}{
		{
			name: "off", corefile: block(""),
			zones:  []string{"example.com.", "example.org.", "10.in-addr.arpa."},
			aZones: []string{"a.example.com.", "a.example.org.", "10.in-addr.arpa."},
		},
		{
			name: "on", corefile: block(" cluster_zones\n"),
			zones: []string{"example.com.", "example.org.", "10.in-addr.arpa.",
				"a.example.com.", "a.example.org.", "x.example.com.", "x.example.org."},
			aZones: []string{"a.example.com.", "a.example.org.", "10.in-addr.arpa."},
		},
		{
			name: "two clusters under one subdomain", corefile: strings.Replace(block(" cluster_zones\n"), "subdomain x", "subdomain a", 1),
			zones:  []string{"example.com.", "example.org.", "10.in-addr.arpa.", "a.example.com.", "a.example.org."},
			aZones: []string{"a.example.com.", "a.example.org.", "10.in-addr.arpa."},
		},
		{name: "arguments", corefile: block(" cluster_zones a\n"), err: []string{"Testfile:2", "cluster_zones"}},
		{
			name:     "no subdomain",
			corefile: "k8s_gateway example.com {\n cluster_zones\n cluster c {\n  kubeconfig " + kc + "\n }\n}",
			err:      []string{"Testfile:2", "no cluster block has a subdomain"},
		},
		{name: "cds", corefile: block(" cds\n cluster_zones\n"), err: []string{"Testfile:3", "cds"}},
		{
			name:     "clusterapi",
			corefile: "k8s_gateway example.com {\n kubeconfig " + kc + "\n clusterapi\n cluster_zones\n}",
			err:      []string{"Testfile:4", "clusterapi", "run time"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := parseCase(t, caddy.NewTestController("dns", tc.corefile), tc.err)
			if g == nil {
				return
			}
			if !reflect.DeepEqual(g.Zones, tc.zones) {
				t.Errorf("zones %q, want %q", g.Zones, tc.zones)
			}
			if got := g.clusters[0].zones(g.blockZones()); !reflect.DeepEqual(got, tc.aZones) {
				t.Errorf("cluster a publishes in %q, want %q", got, tc.aZones)
			}
		})
	}
}

// TestClusterZonesServed: with cluster_zones, a cluster's names answer from
// the zone of its subdomain, which the block's zone delegates and the
// catalog lists (the parent option leaves that delegation alone: see
// delegation.TestSyncerWant).
func TestClusterZonesServed(t *testing.T) {
	g := xtGateway(t, []string{"example.com.", "a.example.com."}, nil)
	g.ownZones = 1
	g.catalog = catalogFeature{name: "catalog.invalid."}
	g.catalog.build(g.Zones, g.ttl, 42)
	var members []string
	for _, rr := range g.catalog.zone.Records() {
		if p, ok := rr.(interface{ String() string }); ok && strings.Contains(p.String(), "\tPTR\t") {
			members = append(members, strings.Fields(p.String())[4])
		}
	}
	if strings.Join(members, " ") != "a.example.com. example.com." {
		t.Errorf("catalog members %q, want both zones", members)
	}
	if got := g.blockZones(); !reflect.DeepEqual(got, []string{"example.com."}) {
		t.Errorf("blockZones %q", got)
	}
}
