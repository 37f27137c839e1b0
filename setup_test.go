package gateway

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/coredns/caddy"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// k8sSetupView is the part of a Gateway that parse fills in.
type k8sSetupView struct {
	Zones          []string
	TTL            uint32
	Apex           string
	Secondary      string
	Resources      []string
	IngressClasses []string
	GatewayClasses []string
	Selectors      map[string][]string
	LabelSelector  string
	Namespaces     []string
	Kubeconfig     string
	Kubecontext    string
	Fall           []string
	Ownership      string
	Delegations    map[string][]string
	Events         bool
	Persist        string
	Include        []string
	Exclude        []string
	Quota          int // of a namespace, 0 for none
}

func k8sRanges(ps []netip.Prefix) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func k8sView(g *Gateway) k8sSetupView {
	return k8sSetupView{
		Zones: g.Zones, TTL: g.ttl, Apex: g.apex, Secondary: g.secondary,
		Resources: g.resources, IngressClasses: g.ingressClasses, GatewayClasses: g.gatewayClasses,
		Selectors: g.labelSelectors, LabelSelector: g.labelSelector, Namespaces: g.namespaces, Kubeconfig: g.kubeconfig, Kubecontext: g.kubecontext, Fall: g.Fall.Zones,
		Ownership: g.ownership.String(), Delegations: g.delegations, Events: g.emitEvents, Persist: g.persist.dir,
		Include: k8sRanges(g.addresses.Include), Exclude: k8sRanges(g.addresses.Exclude),
		Quota: quotaOf(g, "team-a"),
	}
}

// quotaOf returns the quota of namespace ns that g's index gets, 0 for none.
func quotaOf(g *Gateway, ns string) int {
	if q := g.quota(); q != nil {
		return q(ns)
	}
	return 0
}

func TestParse(t *testing.T) {
	kubeconfig := testutil.Kubeconfig(t)
	garbage := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(garbage, []byte("this: [is not: a kubeconfig"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	persistDir := filepath.Join(t.TempDir(), "zones") // created by parse

	// defaults is what `k8s_gateway example.com` gives.
	defaults := func() k8sSetupView {
		return k8sSetupView{
			Zones:       []string{"example.com."},
			TTL:         60,
			Apex:        "dns1.kube-system",
			Resources:   source.SupportedKinds(),
			Selectors:   map[string][]string{},
			Ownership:   "union",
			Delegations: map[string][]string{},
		}
	}
	tests := []struct {
		name     string
		corefile string
		keys     []string            // server block keys
		want     func(*k8sSetupView) // changes to defaults(); nil when an error is expected
		err      []string            // substrings of the error, the first being "Testfile:LINE"
	}{
		{name: "defaults", corefile: `k8s_gateway example.com`, want: func(*k8sSetupView) {}},
		{name: "defaults with an empty block", corefile: "k8s_gateway example.com {\n}", want: func(*k8sSetupView) {}},
		{
			name:     "zones from arguments, normalized",
			corefile: `k8s_gateway Example.COM example.org. sub.example.com:53`,
			want: func(v *k8sSetupView) {
				v.Zones = []string{"example.com.", "example.org.", "sub.example.com."}
			},
		},
		{
			name:     "zones from the server block",
			corefile: `k8s_gateway`,
			keys:     []string{"Example.com:53", "dns://example.org.:1053"},
			want:     func(v *k8sSetupView) { v.Zones = []string{"example.com.", "example.org."} },
		},
		{
			name:     "arguments win over the server block",
			corefile: `k8s_gateway example.net`,
			keys:     []string{"example.com:53"},
			want:     func(v *k8sSetupView) { v.Zones = []string{"example.net."} },
		},
		{
			name:     "reverse zone from a CIDR",
			corefile: `k8s_gateway example.com 10.1.0.0/16`,
			want:     func(v *k8sSetupView) { v.Zones = []string{"example.com.", "1.10.in-addr.arpa."} },
		},
		{
			name:     "reverse zones only, absolute nameserver names",
			corefile: "k8s_gateway 2.0.192.in-addr.arpa {\n apex ns1.example.net.\n secondary NS2.example.net.\n}",
			want: func(v *k8sSetupView) {
				v.Zones = []string{"2.0.192.in-addr.arpa."}
				v.Apex, v.Secondary = "ns1.example.net.", "ns2.example.net."
			},
		},
		{
			name:     "duplicate zones collapse",
			corefile: `k8s_gateway example.com EXAMPLE.com.`,
			want:     func(*k8sSetupView) {},
		},
		{
			name: "every option",
			corefile: fmt.Sprintf(`k8s_gateway example.com example.org {
				resources Ingress service
				ttl 300
				apex exdns-1-k8s-gateway.kube-system
				secondary exdns-2-k8s-gateway.kube-system
				kubeconfig %s two
				fallthrough example.org
				ingressClasses nginx traefik
				gatewayClasses cilium
				serviceLabelSelectors app=web "tier in (front,back)"
				labelSelector !internal
				namespaces apps web
			}`, kubeconfig),
			want: func(v *k8sSetupView) {
				v.Zones = []string{"example.com.", "example.org."}
				v.Resources = []string{"Ingress", "Service"}
				v.TTL = 300
				v.Apex = "exdns-1-k8s-gateway.kube-system"
				v.Secondary = "exdns-2-k8s-gateway.kube-system"
				v.Kubeconfig, v.Kubecontext = kubeconfig, "two"
				v.Fall = []string{"example.org."}
				v.IngressClasses = []string{"nginx", "traefik"}
				v.GatewayClasses = []string{"cilium"}
				v.Selectors = map[string][]string{"Service": {"app=web", "tier in (front,back)"}}
				v.LabelSelector = "!internal"
				v.Namespaces = []string{"apps", "web"}
			},
		},
		{
			name:     "resources: one kind, any case, duplicates removed",
			corefile: "k8s_gateway example.com {\n resources service SERVICE Service\n}",
			want:     func(v *k8sSetupView) { v.Resources = []string{"Service"} },
		},
		{name: "ttl 0", corefile: "k8s_gateway example.com {\n ttl 0\n}", want: func(v *k8sSetupView) { v.TTL = 0 }},
		{name: "ttl 3600", corefile: "k8s_gateway example.com {\n ttl 3600\n}", want: func(v *k8sSetupView) { v.TTL = 3600 }},
		{
			name:     "absolute apex, upper case",
			corefile: "k8s_gateway example.com {\n apex NS1.Example.NET.\n}",
			want:     func(v *k8sSetupView) { v.Apex = "ns1.example.net." },
		},
		{
			name:     "one-label apex",
			corefile: "k8s_gateway example.com {\n apex ns1\n}",
			want:     func(v *k8sSetupView) { v.Apex = "ns1" },
		},
		{
			name:     "kubeconfig without context",
			corefile: "k8s_gateway example.com {\n kubeconfig " + kubeconfig + "\n}",
			want:     func(v *k8sSetupView) { v.Kubeconfig = kubeconfig },
		},
		{
			name:     "fallthrough for every zone",
			corefile: "k8s_gateway example.com {\n fallthrough\n}",
			want:     func(v *k8sSetupView) { v.Fall = []string{"."} },
		},
		{
			name:     "label selector, one token",
			corefile: "k8s_gateway example.com {\n serviceLabelSelectors !internal\n}",
			want:     func(v *k8sSetupView) { v.Selectors = map[string][]string{"Service": {"!internal"}} },
		},

		// Errors name the line of the Corefile.
		{
			name:     "include and exclude, repeated lines add up",
			corefile: "k8s_gateway example.com {\n include 10.0.0.0/8 fd00::/8\n include 192.0.2.1\n exclude 10.9.0.0/16\n}",
			want: func(v *k8sSetupView) {
				v.Include = []string{"10.0.0.0/8", "fd00::/8", "192.0.2.1/32"}
				v.Exclude = []string{"10.9.0.0/16"}
			},
		},
		{name: "exclude without ranges", corefile: "k8s_gateway example.com {\n ttl 30\n exclude\n}", err: []string{"Testfile:3", "exclude CIDR..."}},
		{name: "include with host bits", corefile: "k8s_gateway example.com {\n include 10.1.2.3/8\n}", err: []string{"Testfile:2", "did you mean 10.0.0.0/8"}},
		{name: "unknown option", corefile: "k8s_gateway example.com {\n ttl 30\n foo bar\n}", err: []string{"Testfile:3", `unknown property "foo"`}},
		// The fork's Node kind and its option: refused with what to use instead.
		{name: "resources Node", corefile: "k8s_gateway example.com {\n resources Ingress Node\n}", err: []string{"Testfile:2", "resource Node", "never publishes node addresses", "DNSEndpoint"}},
		{name: "nodeAddressType", corefile: "k8s_gateway example.com {\n nodeAddressType ExternalIP\n}", err: []string{"Testfile:2", "nodeAddressType", "never publishes node addresses", "LoadBalancer Service"}},
		{name: "serviceLabelSelectors, one bad of several", corefile: "k8s_gateway example.com {\n serviceLabelSelectors app=web \"tier in (a\"\n}", err: []string{"Testfile:2", `"tier in (a"`, "join them with commas"}},
		{name: "ttl not a number", corefile: "k8s_gateway example.com {\n ttl ten\n}", err: []string{"Testfile:2", "ttl", `"ten"`}},
		{name: "ttl negative", corefile: "k8s_gateway example.com {\n ttl -1\n}", err: []string{"Testfile:2", "ttl", `"-1"`}},
		{name: "ttl too large", corefile: "k8s_gateway example.com {\n\n ttl 3601\n}", err: []string{"Testfile:3", "ttl", "3600", `"3601"`}},
		{name: "ttl without argument", corefile: "k8s_gateway example.com {\n ttl\n}", err: []string{"Testfile:2", "ttl"}},
		{name: "ttl with two arguments", corefile: "k8s_gateway example.com {\n ttl 1 2\n}", err: []string{"Testfile:2", "ttl"}},
		{name: "unknown resource", corefile: "k8s_gateway example.com {\n resources Ingress Pod\n}", err: []string{"Testfile:2", `unknown resource "Pod"`, "Ingress", "Service"}},
		{name: "resources without argument", corefile: "k8s_gateway example.com {\n resources\n}", err: []string{"Testfile:2", "resources"}},
		{name: "missing kubeconfig", corefile: "k8s_gateway example.com {\n kubeconfig " + missing + "\n}", err: []string{"Testfile:2", "kubeconfig", missing}},
		{name: "unreadable kubeconfig", corefile: "k8s_gateway example.com {\n kubeconfig " + garbage + "\n}", err: []string{"Testfile:2", "kubeconfig", garbage}},
		{name: "missing context", corefile: "k8s_gateway example.com {\n kubeconfig " + kubeconfig + " three\n}", err: []string{"Testfile:2", `context "three" not found`}},
		{name: "kubeconfig without argument", corefile: "k8s_gateway example.com {\n kubeconfig\n}", err: []string{"Testfile:2", "kubeconfig"}},
		{name: "kubeconfig with three arguments", corefile: "k8s_gateway example.com {\n kubeconfig a b c\n}", err: []string{"Testfile:2", "kubeconfig"}},
		{name: "apex without argument", corefile: "k8s_gateway example.com {\n apex\n}", err: []string{"Testfile:2", "apex"}},
		{name: "invalid apex", corefile: "k8s_gateway example.com {\n apex dns1..kube-system\n}", err: []string{"Testfile:2", "invalid apex", `"dns1..kube-system"`}},
		{name: "invalid apex character", corefile: "k8s_gateway example.com {\n apex dns1@kube-system\n}", err: []string{"Testfile:2", "invalid apex", `"dns1@kube-system"`}},
		{name: "invalid secondary", corefile: "k8s_gateway example.com {\n apex ns1\n secondary -ns2\n}", err: []string{"Testfile:3", "invalid secondary", `"-ns2"`}},
		{name: "ingressClasses without argument", corefile: "k8s_gateway example.com {\n ingressClasses\n}", err: []string{"Testfile:2", "ingressClasses"}},
		{name: "gatewayClasses without argument", corefile: "k8s_gateway example.com {\n gatewayClasses\n}", err: []string{"Testfile:2", "gatewayClasses"}},
		{name: "serviceLabelSelectors without argument", corefile: "k8s_gateway example.com {\n serviceLabelSelectors\n}", err: []string{"Testfile:2", "serviceLabelSelectors"}},
		{name: "bad label selector", corefile: "k8s_gateway example.com {\n serviceLabelSelectors \"app in (a\"\n}", err: []string{"Testfile:2", "invalid label selector", `"app in (a"`}},
		{name: "bad label selector key", corefile: "k8s_gateway example.com {\n serviceLabelSelectors -bad-=x\n}", err: []string{"Testfile:2", "invalid label selector", `"-bad-=x"`}},
		{name: "labelSelector without argument", corefile: "k8s_gateway example.com {\n labelSelector\n}", err: []string{"Testfile:2", "labelSelector"}},
		{name: "bad labelSelector", corefile: "k8s_gateway example.com {\n labelSelector a==b==c\n}", err: []string{"Testfile:2", "invalid label selector", `"a==b==c"`}},
		{
			name:     "ownership and delegations",
			corefile: "k8s_gateway example.com {\n ownership delegated\n delegate team-a A.example.com shop.example.com.\n delegate team-b b.example.com\n delegate team-a a.example.com\n}",
			want: func(v *k8sSetupView) {
				v.Ownership, v.Quota = "delegated", 10_000
				v.Delegations = map[string][]string{"team-a": {"a.example.com.", "shop.example.com."}, "team-b": {"b.example.com."}}
			},
		},
		{name: "events", corefile: "k8s_gateway example.com {\n events\n}", want: func(v *k8sSetupView) { v.Events = true }},
		{name: "events with an argument", corefile: "k8s_gateway example.com {\n events on\n}", err: []string{"Testfile:2", "for events"}},
		{name: "persist", corefile: "k8s_gateway example.com {\n persist " + persistDir + "\n}", want: func(v *k8sSetupView) { v.Persist = persistDir }},
		{name: "persist without a directory", corefile: "k8s_gateway example.com {\n persist\n}", err: []string{"Testfile:2", "persist DIR"}},
		{name: "persist in a file", corefile: "k8s_gateway example.com {\n ttl 30\n persist " + garbage + "\n}", err: []string{"Testfile:3", "persist:", garbage}},
		{name: "ownership first", corefile: "k8s_gateway example.com {\n ownership first\n}", want: func(v *k8sSetupView) { v.Ownership, v.Quota = "first", 10_000 }},
		{name: "ownership delegated", corefile: "k8s_gateway example.com {\n ownership delegated\n}", want: func(v *k8sSetupView) { v.Ownership, v.Quota = "delegated", 10_000 }},
		{name: "tenant_quota", corefile: "k8s_gateway example.com {\n tenant_quota 500\n}", want: func(v *k8sSetupView) { v.Quota = 500 }},
		{name: "tenant_quota 0 under first", corefile: "k8s_gateway example.com {\n tenant_quota 0\n ownership first\n}", want: func(v *k8sSetupView) { v.Ownership = "first" }},
		{name: "tenant_quota not a number", corefile: "k8s_gateway example.com {\n tenant_quota many\n}", err: []string{"Testfile:2", "tenant_quota", `"many"`}},
		{name: "tenant_quota negative", corefile: "k8s_gateway example.com {\n tenant_quota -1\n}", err: []string{"Testfile:2", "tenant_quota", `"-1"`}},
		{name: "tenant_quota without argument", corefile: "k8s_gateway example.com {\n tenant_quota\n}", err: []string{"Testfile:2", "tenant_quota RECORDS"}},
		{name: "unknown ownership", corefile: "k8s_gateway example.com {\n ownership mine\n}", err: []string{"Testfile:2", `unknown ownership policy "mine"`}},
		{name: "ownership without argument", corefile: "k8s_gateway example.com {\n ownership\n}", err: []string{"Testfile:2", "ownership union|first|delegated"}},
		{name: "delegate without domain", corefile: "k8s_gateway example.com {\n delegate team-a\n}", err: []string{"Testfile:2", "delegate NAMESPACE DOMAIN..."}},
		{name: "delegate an invalid domain", corefile: "k8s_gateway example.com {\n delegate team-a a..example.com\n}", err: []string{"Testfile:2", `invalid domain "a..example.com"`, "team-a"}},
		{name: "namespaces without argument", corefile: "k8s_gateway example.com {\n namespaces\n}", err: []string{"Testfile:2", "namespaces"}},
		{name: "invalid zone argument", corefile: "k8s_gateway example.com example.org:", err: []string{"Testfile:1", `invalid zone "example.org:"`}},
		{name: "no zones at all", corefile: "k8s_gateway", err: []string{"Testfile:1", "zone"}},
		{name: "two directives", corefile: "k8s_gateway example.com\nk8s_gateway example.org", err: []string{"Testfile:2", "only one k8s_gateway"}},

		// Zones that cannot work are rejected when the Corefile is parsed.
		{name: "root zone", corefile: "k8s_gateway .", err: []string{"Testfile:1", "root zone cannot be served"}},
		{name: "root zone from the server block", corefile: "k8s_gateway {\n ttl 30\n}", keys: []string{".:53"}, err: []string{"Testfile:1", "root zone"}},
		{name: "root zone among others", corefile: "k8s_gateway example.com .", err: []string{"Testfile:1", "root zone"}},
		{
			name:     "a zone whose SOA cannot be encoded",
			corefile: "k8s_gateway " + strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 53) + " {\n apex ns1.example.net.\n}",
			err:      []string{"Testfile:1", "cannot be encoded", "hostmaster." + strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 53) + "."},
		},
		{
			name:     "a zone whose nameserver name cannot be encoded",
			corefile: "k8s_gateway example.com {\n apex " + strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 53) + "\n}",
			err:      []string{"Testfile:2", "cannot be encoded", "" + strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 53) + ".example.com."},
		},
		{name: "reverse zones only, default apex", corefile: "k8s_gateway 2.0.192.in-addr.arpa", err: []string{"Testfile:1", `apex "dns1.kube-system" is relative`, "2.0.192.in-addr.arpa.", "absolute"}},
		{name: "reverse zones only, relative apex", corefile: "k8s_gateway 10.0.0.0/8 {\n ttl 30\n apex ns1\n}", err: []string{"Testfile:3", `apex "ns1" is relative`}},
		{name: "reverse zones only, relative secondary", corefile: "k8s_gateway 2001:db8::/32 {\n apex ns1.example.net.\n\n secondary ns2\n}", err: []string{"Testfile:4", `secondary "ns2" is relative`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := caddy.NewTestController("dns", tc.corefile)
			c.ServerBlockKeys = tc.keys
			g, err := parse(c)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("parse succeeded, want an error containing %q; got %+v", tc.err, k8sView(g))
				}
				for _, s := range tc.err {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			want := defaults()
			tc.want(&want)
			if got := k8sView(g); !reflect.DeepEqual(got, want) {
				t.Errorf("parse gave\n\t%+v\nwant\n\t%+v", got, want)
			}
		})
	}
}
