package watch

import (
	"testing"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// The resources each CRD set the e2e tests install serves, by group version.
var (
	crdsV12 = map[string][]string{ // v1.2, experimental channel
		"gateway.networking.k8s.io/v1":       {"gatewayclasses", "gateways", "httproutes", "grpcroutes"},
		"gateway.networking.k8s.io/v1alpha2": {"tcproutes", "tlsroutes", "udproutes", "backendlbpolicies"},
	}
	crdsV14 = map[string][]string{ // v1.4, experimental channel
		"gateway.networking.k8s.io/v1":         {"gatewayclasses", "gateways", "httproutes", "grpcroutes", "backendtlspolicies"},
		"gateway.networking.k8s.io/v1alpha2":   {"tcproutes", "tlsroutes", "udproutes"},
		"gateway.networking.k8s.io/v1alpha3":   {"tlsroutes", "backendtlspolicies"},
		"gateway.networking.x-k8s.io/v1alpha1": {"xlistenersets", "xmeshes"},
	}
	crdsV16 = map[string][]string{ // v1.6, standard channel
		"gateway.networking.k8s.io/v1": {"gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes", "listenersets"},
	}
	crdsV10 = map[string][]string{ // GRPCRoute only experimental, at v1alpha2
		"gateway.networking.k8s.io/v1":       {"gateways", "httproutes"},
		"gateway.networking.k8s.io/v1alpha2": {"grpcroutes"},
	}
)

// TestNewestServed: each kind is read at the newest version the cluster serves.
func TestNewestServed(t *testing.T) {
	tests := []struct {
		kind   string
		served map[string][]string
		want   string // group version; "" for none
	}{
		{"HTTPRoute", crdsV12, "gateway.networking.k8s.io/v1"},
		{"GRPCRoute", crdsV12, "gateway.networking.k8s.io/v1"},
		{"GRPCRoute", crdsV10, "gateway.networking.k8s.io/v1alpha2"},
		{"TLSRoute", crdsV12, "gateway.networking.k8s.io/v1alpha2"},
		{"TLSRoute", crdsV14, "gateway.networking.k8s.io/v1alpha3"},
		{"TLSRoute", crdsV16, "gateway.networking.k8s.io/v1"},
		{"TCPRoute", crdsV12, "gateway.networking.k8s.io/v1alpha2"},
		{"TCPRoute", crdsV14, "gateway.networking.k8s.io/v1alpha2"},
		{"TCPRoute", crdsV16, "gateway.networking.k8s.io/v1"},
		{"UDPRoute", crdsV14, "gateway.networking.k8s.io/v1alpha2"},
		{"UDPRoute", crdsV16, "gateway.networking.k8s.io/v1"},
		{"UDPRoute", crdsV10, ""},
		{"ListenerSet", crdsV12, ""},
		{"ListenerSet", crdsV14, "gateway.networking.x-k8s.io/v1alpha1"},
		{"ListenerSet", crdsV16, "gateway.networking.k8s.io/v1"},
		{"TCPRoute", nil, ""},
	}
	for _, tc := range tests {
		k := source.KindByName(tc.kind)
		if tc.kind == "ListenerSet" {
			k = source.ListenerSetKind
		}
		got := ""
		if v := newestServed(k, tc.served); v != nil {
			got = v.GroupVersion
			if v.Name != k.Name || v.Records == nil != (k.Records == nil) {
				t.Errorf("%s: the version read is not the same kind: %+v", tc.kind, v)
			}
		}
		if got != tc.want {
			t.Errorf("%s: newestServed = %q, want %q", tc.kind, got, tc.want)
		}
	}
}
