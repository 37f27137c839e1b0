package gateway

import (
	"context"
	"net/netip"
	"testing"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// widgetKind is a made-up kind read as unstructured objects: a Widget
// publishes spec.hostname at spec.address. It is what CONTRIBUTING.md's
// "Add a kind" asks for: a records function (a kind's file) and one row.
var widgetKind = &source.Kind{
	Name: "Widget", GroupVersion: "example.dev/v1", Resource: "widgets",
	Object: &unstructured.Unstructured{}, Dynamic: true,
	Records: func(obj any, c *source.Config, _ source.Context) source.Result {
		u := obj.(*unstructured.Unstructured)
		host, _, _ := unstructured.NestedString(u.Object, "spec", "hostname")
		addr, _, _ := unstructured.NestedString(u.Object, "spec", "address")
		ip, err := netip.ParseAddr(addr)
		var r source.Result
		if err != nil || !dns.IsSubDomain(c.Zones[0], dns.Fqdn(host)) {
			r.Warnings = append(r.Warnings, "no valid hostname and address")
			return r
		}
		hdr := dns.RR_Header{Name: dns.Fqdn(host), Class: dns.ClassINET, Ttl: c.TTL}
		r.RRs = append(r.RRs, index.AddressRecord(hdr, ip))
		return r
	},
}

func widget(name, host, addr string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"hostname": host, "address": addr},
	}}
	u.SetAPIVersion("example.dev/v1")
	u.SetKind("Widget")
	u.SetNamespace("default")
	u.SetName(name)
	return u
}

// TestAddKindByRow: a kind read as unstructured objects is added by its row
// alone: the resources option takes its name, the controller lists and
// watches it (and no DNSEndpoint), and its objects' records are answered.
func TestAddKindByRow(t *testing.T) {
	source.Kinds = append(source.Kinds, widgetKind)
	t.Cleanup(func() { source.Kinds = source.Kinds[:len(source.Kinds)-1] })

	c := caddy.NewTestController("dns", "k8s_gateway example.com {\n resources Widget Service\n}")
	parsed, err := parse(c)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if len(parsed.resources) != 2 || parsed.resources[0] != "Widget" {
		t.Fatalf("resources %v, want [Widget Service]", parsed.resources)
	}

	gvr := schema.GroupVersionResource{Group: "example.dev", Version: "v1", Resource: "widgets"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: "WidgetList"}, widget("old", "old.example.com", "192.0.2.7"))
	api := watchtest.API{Core: fake.NewSimpleClientset(), Dynamic: dyn}
	g := k8sStartGatewayAPI(t, api, []string{"example.com."}, func(g *Gateway) { g.resources = parsed.resources })

	k8sAnswers(t, g, "old.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"old.example.com. 60 IN A 192.0.2.7"}))
	if _, err := dyn.Resource(gvr).Namespace("default").Create(context.Background(), widget("new", "new.example.com", "192.0.2.8"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "new.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"new.example.com. 60 IN A 192.0.2.8"}))
	if err := dyn.Resource(gvr).Namespace("default").Delete(context.Background(), "old", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "old.example.com.", dns.TypeA, k8sNX)
	for _, a := range dyn.Actions() {
		if a.GetResource().Resource != "widgets" {
			t.Errorf("the controller asked for %s, not only widgets", a.GetResource())
		}
	}
}
