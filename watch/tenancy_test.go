package watch

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
)

func TestClaimOf(t *testing.T) {
	created := metav1.NewTime(time.Unix(1700000000, 0))
	route := &metav1.ObjectMeta{Namespace: "team-b", Name: "r", CreationTimestamp: created}
	tests := []struct {
		name string
		w    *watched
		meta metav1.Object
		want index.Claim
	}{
		// A route is checked against its own namespace, whichever Gateway it attaches to.
		{"route through a shared Gateway", &watched{Kind: source.KindByName("HTTPRoute")}, route, index.Claim{Namespace: "team-b", Created: created.UnixNano()}},
		{"nameserver Service", &watched{Kind: source.KindByName("Service"), Nameserver: true}, &metav1.ObjectMeta{Namespace: "kube-system", Name: "dns1"}, index.Claim{}},
		// Its hostnames through the Service informer, the nameserver name among them.
		{"nameserver Service as a Service", &watched{Kind: source.KindByName("Service")}, &metav1.ObjectMeta{Namespace: "kube-system", Name: "dns1", CreationTimestamp: created}, index.Claim{}},
		{"another Service of its namespace", &watched{Kind: source.KindByName("Service")}, &metav1.ObjectMeta{Namespace: "kube-system", Name: "dns2", CreationTimestamp: created}, index.Claim{Namespace: "kube-system", Created: created.UnixNano()}},
		{"an Ingress named like it", &watched{Kind: source.KindByName("Ingress")}, &metav1.ObjectMeta{Namespace: "kube-system", Name: "dns1", CreationTimestamp: created}, index.Claim{Namespace: "kube-system", Created: created.UnixNano()}},
		{"cluster-scoped object", &watched{Kind: source.KindByName("Service")}, &metav1.ObjectMeta{Name: "x", CreationTimestamp: created}, index.Claim{Namespace: "/", Created: created.UnixNano()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := claimOf(tt.w, tt.meta, []string{"kube-system/dns1"}); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestObjectReference(t *testing.T) {
	tests := []struct {
		key  string
		want ObjectRef
		ok   bool
	}{
		{"Service/a/web", ObjectRef{ApiVersion: "v1", Kind: "Service", Namespace: "a", Name: "web"}, true},
		{"HTTPRoute/b/r", ObjectRef{ApiVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute", Namespace: "b", Name: "r"}, true},
		{"Gateway/infra/gw", ObjectRef{ApiVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway", Namespace: "infra", Name: "gw"}, true},
		{"Nameserver/kube-system/dns1", ObjectRef{}, false},
		{"Service//x", ObjectRef{}, false},
		{"garbage", ObjectRef{}, false},
	}
	for _, tt := range tests {
		if got, ok := objectReference(tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("%s: got %+v %v, want %+v %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

func TestResourceOf(t *testing.T) {
	for _, tt := range []struct {
		ref  ObjectRef
		want string
	}{
		{ObjectRef{ApiVersion: "v1", Kind: "Service"}, "/v1, Resource=services"},
		{ObjectRef{ApiVersion: "networking.k8s.io/v1", Kind: "Ingress"}, "networking.k8s.io/v1, Resource=ingresses"},
		{ObjectRef{ApiVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway"}, "gateway.networking.k8s.io/v1, Resource=gateways"},
		{ObjectRef{ApiVersion: "v1", Kind: "Pod"}, ""},
	} {
		got := ""
		if gvr, ok := resourceOf(tt.ref); ok {
			got = gvr.String()
		}
		if got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.ref, got, tt.want)
		}
	}
}

// TestEventReferenceReadVersion: an Event names the object at the version
// the plugin reads it, which for routes may be older than v1.
func TestEventReferenceReadVersion(t *testing.T) {
	e := &Events{Version: func(kind, namespace string) string {
		if kind == "TLSRoute" && namespace == "apps" {
			return "gateway.networking.k8s.io/v1alpha2"
		}
		return ""
	}}
	for key, want := range map[string]string{
		"TLSRoute/apps/db":  "gateway.networking.k8s.io/v1alpha2",
		"TLSRoute/other/db": "gateway.networking.k8s.io/v1",
		"Service/apps/web":  "v1",
	} {
		if ref, ok := e.Reference(key); !ok || ref.ApiVersion != want {
			t.Errorf("%s: %+v %v, want apiVersion %s", key, ref, ok, want)
		}
	}
}
