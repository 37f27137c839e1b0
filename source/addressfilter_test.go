package source

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// afFilter builds a filter from include and exclude ranges, failing the test on a bad one.
func afFilter(t *testing.T, include, exclude []string) *AddressFilter {
	t.Helper()
	f := &AddressFilter{}
	if len(include) > 0 {
		if err := f.AddRanges("include", include); err != nil {
			t.Fatal(err)
		}
	}
	if len(exclude) > 0 {
		if err := f.AddRanges("exclude", exclude); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// private are the ranges of the split-horizon recipe.
var afPrivate = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"}

func TestAddressFilterKeeps(t *testing.T) {
	tests := []struct {
		name             string
		include, exclude []string
		keep, drop       []string
	}{
		{name: "no ranges keep everything", keep: []string{"10.0.0.1", "203.0.113.1", "2001:db8::1"}},
		{name: "exclude private", exclude: afPrivate,
			keep: []string{"203.0.113.1", "2001:db8::1", "172.32.0.1", "11.0.0.1"},
			drop: []string{"10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "fd00::1", "::ffff:10.0.0.1"}},
		{name: "include private", include: afPrivate,
			keep: []string{"10.1.2.3", "192.168.1.1", "fd12::1", "::ffff:10.0.0.1"},
			drop: []string{"203.0.113.1", "2001:db8::1", "172.32.0.1"}},
		{name: "exclude wins inside include", include: []string{"10.0.0.0/8"}, exclude: []string{"10.9.0.0/16", "10.0.0.7"},
			keep: []string{"10.1.0.1", "10.0.0.8"}, drop: []string{"10.9.1.1", "10.0.0.7", "192.0.2.1"}},
		{name: "IPv4 ranges do not match IPv6", include: []string{"0.0.0.0/0"},
			keep: []string{"192.0.2.1"}, drop: []string{"2001:db8::1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := afFilter(t, tc.include, tc.exclude)
			for _, s := range tc.keep {
				if !f.keeps(netip.MustParseAddr(s)) {
					t.Errorf("%s dropped, want kept", s)
				}
			}
			for _, s := range tc.drop {
				if f.keeps(netip.MustParseAddr(s)) {
					t.Errorf("%s kept, want dropped", s)
				}
			}
		})
	}
	var none *AddressFilter
	if !none.keeps(netip.MustParseAddr("10.0.0.1")) {
		t.Error("a nil filter dropped an address")
	}
}

func TestAddressFilterRanges(t *testing.T) {
	tests := []struct {
		opt  string
		args []string
		want string // the ranges, space-separated, or the error's text
		err  bool
	}{
		{"exclude", []string{"10.0.0.0/8", "fc00::/7"}, "10.0.0.0/8 fc00::/7", false},
		{"include", []string{"192.0.2.1", "2001:db8::1"}, "192.0.2.1/32 2001:db8::1/128", false},
		{"include", []string{"::ffff:192.0.2.1"}, "192.0.2.1/32", false},
		{"exclude", []string{"10.0.0.0/8", "10.0.0.0/8"}, "10.0.0.0/8", false},
		{"exclude", nil, "wrong number of arguments (0) for exclude CIDR...", true},
		{"exclude", []string{"10.0.0.1/8"}, "host bits set, did you mean 10.0.0.0/8?", true},
		{"include", []string{"10.0.0.0/33"}, `invalid address range "10.0.0.0/33"`, true},
		{"include", []string{"example.com"}, "not an address or CIDR range", true},
		{"include", []string{"fe80::1%eth0"}, "not an address or CIDR range", true},
		{"include", []string{"::ffff:10.0.0.0/104"}, "IPv4-mapped", true},
	}
	for _, tc := range tests {
		f := &AddressFilter{}
		err := f.AddRanges(tc.opt, tc.args)
		if tc.err {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %q: error %v, want one with %q", tc.opt, tc.args, err, tc.want)
			}
			continue
		}
		list := f.Exclude
		if tc.opt == "include" {
			list = f.Include
		}
		var got []string
		for _, p := range list {
			got = append(got, p.String())
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("%s %q: got %q, %v; want %q", tc.opt, tc.args, got, err, tc.want)
		}
	}
}

// TestAddressFilterSources: every source applies the filter before its
// records are made, so that a name whose addresses are all filtered out
// falls back to a hostname target (CNAME), and SRV records and glue follow.
func TestAddressFilterSources(t *testing.T) {
	external := func(c *Config) { c.Addresses = afFilter(t, nil, afPrivate) }
	internal := func(c *Config) { c.Addresses = afFilter(t, afPrivate, nil) }
	// One route on an internal and an external Gateway.
	gws := []*gwv1.Gateway{
		testutil.Gateway("default", "internal", []string{"10.0.0.10", "fd00::10"}, testutil.HTTPListener("web", "")),
		testutil.Gateway("default", "external", []string{"203.0.113.10", "2001:db8::10"}, testutil.HTTPListener("web", "")),
		testutil.Gateway("default", "cloud", []string{"10.0.0.20", "lb.example.net"}, testutil.HTTPListener("web", "")),
	}
	both := testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.Ref("internal"), testutil.Ref("external"))
	gwtRun(t, []gwtCase{
		{name: "no filter: both Gateways", gateways: gws, route: both, want: []string{
			"www.example.com. 60 IN A 10.0.0.10", "www.example.com. 60 IN AAAA fd00::10",
			"www.example.com. 60 IN A 203.0.113.10", "www.example.com. 60 IN AAAA 2001:db8::10"}},
		{name: "external view", cfg: external, gateways: gws, route: both, want: []string{
			"www.example.com. 60 IN A 203.0.113.10", "www.example.com. 60 IN AAAA 2001:db8::10"}},
		{name: "internal view", cfg: internal, gateways: gws, route: both, want: []string{
			"www.example.com. 60 IN A 10.0.0.10", "www.example.com. 60 IN AAAA fd00::10"}},
		{name: "addresses filtered out: the hostname is the CNAME", cfg: external, gateways: gws,
			route: testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.Ref("cloud")),
			want:  []string{"www.example.com. 60 IN CNAME lb.example.net."}},
		{name: "kept address wins over the hostname", cfg: internal, gateways: gws,
			route: testutil.NewRoute("HTTPRoute", []string{"www.example.com"}, testutil.Ref("cloud")),
			want:  []string{"www.example.com. 60 IN A 10.0.0.20"}},
	})

	t.Run("Service with SRV", func(t *testing.T) {
		svc := testutil.WithPorts(testutil.Service(corev1.ServiceTypeLoadBalancer, "10.0.0.5", "203.0.113.5"),
			corev1.ServicePort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP})
		cfg := &Config{Zones: []string{"example.com."}, TTL: 60}
		external(cfg)
		gwtCheck(t, "external", serviceRecords(k8sSlimService(svc), cfg), []string{
			"web.apps.example.com. 60 IN A 203.0.113.5",
			"_https._tcp.web.apps.example.com. 60 IN SRV 0 100 443 web.apps.example.com.",
		}, nil)
		cfg.Addresses = afFilter(t, nil, []string{"0.0.0.0/0"})
		gwtCheck(t, "every address excluded", serviceRecords(k8sSlimService(svc), cfg), nil, nil)
	})

	t.Run("DNSEndpoint", func(t *testing.T) {
		ep := &dnsEndpoint{ObjectMeta: metav1.ObjectMeta{Name: "ep", Namespace: "default"}}
		ep.Spec.Endpoints = []endpoint{
			{DNSName: "a.example.com", RecordType: "A", Targets: []string{"10.0.0.1", "198.51.100.1"}},
			{DNSName: "aaaa.example.com", RecordType: "AAAA", Targets: []string{"fd00::1"}},
			{DNSName: "txt.example.com", RecordType: "TXT", Targets: []string{"10.0.0.1"}},
		}
		cfg := &Config{Zones: []string{"example.com."}, TTL: 60}
		external(cfg)
		gwtCheck(t, "external", dnsEndpointRecords(ep, cfg), []string{
			"a.example.com. 60 IN A 198.51.100.1", `txt.example.com. 60 IN TXT "10.0.0.1"`,
		}, nil)
	})
}
