package gateway

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1a2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwv1a3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
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
		k := kindByName(tc.kind)
		if tc.kind == "ListenerSet" {
			k = listenerSetKind
		}
		got := ""
		if v := newestServed(k, tc.served); v != nil {
			got = v.groupVersion
			if v.name != k.name || v.records == nil != (k.records == nil) {
				t.Errorf("%s: the version read is not the same kind: %+v", tc.kind, v)
			}
		}
		if got != tc.want {
			t.Errorf("%s: newestServed = %q, want %q", tc.kind, got, tc.want)
		}
	}
}

// TestSlimRouteOlderVersions: routes read at older versions become routes
// as v1 ones do, with what the sources read.
func TestSlimRouteOlderVersions(t *testing.T) {
	refs := []gwv1.ParentReference{gwtRef("gw")}
	parents := []gwv1.RouteParentStatus{gwtParent(refs[0], metav1.ConditionTrue)}
	meta := metav1.ObjectMeta{Name: "r", Namespace: "default", Annotations: map[string]string{"coredns.io/hostname": "db"}}
	hosts := []gwv1.Hostname{"db.example.com"}
	for _, obj := range []any{
		&gwv1a2.TCPRoute{ObjectMeta: meta, Spec: gwv1a2.TCPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}},
			Status: gwv1a2.TCPRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: parents}}},
		&gwv1a2.UDPRoute{ObjectMeta: meta, Spec: gwv1a2.UDPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}},
			Status: gwv1a2.UDPRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: parents}}},
		&gwv1a2.TLSRoute{ObjectMeta: meta, Spec: gwv1a2.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}, Hostnames: hosts},
			Status: gwv1a2.TLSRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: parents}}},
		&gwv1a3.TLSRoute{ObjectMeta: meta, Spec: gwv1.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}, Hostnames: hosts},
			Status: gwv1.TLSRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: parents}}},
		&gwv1a2.GRPCRoute{ObjectMeta: meta, Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: refs}, Hostnames: hosts},
			Status: gwv1.GRPCRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: parents}}},
	} {
		slim, err := slimRoute(obj)
		if err != nil {
			t.Fatal(err)
		}
		rt, ok := slim.(*route)
		if !ok {
			t.Fatalf("%T: slimRoute kept the API type", obj)
		}
		if len(rt.parentRefs) != 1 || !slices.Equal(rt.accepted, []bool{true}) || !annotated(rt, "coredns.io/hostname", "db") ||
			(rt.kind == "TLSRoute" || rt.kind == "GRPCRoute") && len(rt.hostnames) != 1 {
			t.Errorf("%T: slim route lost fields: %+v", obj, rt)
		}
	}
}

// annotated reports whether m has the annotation key with value v.
func annotated(m sourceMeta, key, v string) bool {
	got, ok := m.annotation(key)
	return ok && got == v
}
