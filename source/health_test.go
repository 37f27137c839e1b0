package source

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

func healthGateway(name string, programmed metav1.ConditionStatus) *gwv1.Gateway {
	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: name}}
	if programmed != "" {
		gw.Status.Conditions = []metav1.Condition{
			{Type: string(gwv1.GatewayConditionAccepted), Status: metav1.ConditionTrue},
			{Type: string(gwv1.GatewayConditionProgrammed), Status: programmed, Reason: "Pending", Message: "long text"},
		}
	}
	slim, err := slimGateway(gw) // as the informer keeps it
	if err != nil {
		panic(err)
	}
	return slim.(*gwv1.Gateway)
}

func TestGatewayAndRouteHealth(t *testing.T) {
	gws := []*gwv1.Gateway{
		healthGateway("up", metav1.ConditionTrue),
		healthGateway("down", metav1.ConditionFalse),
		healthGateway("down2", metav1.ConditionFalse),
		healthGateway("unknown", ""),
	}
	ctx := gwtNewContext(gws, nil)
	for _, gw := range gws {
		if got, want := gatewayUnprogrammed(gw), gw.Name == "down" || gw.Name == "down2"; got != want {
			t.Errorf("Gateway %s: unprogrammed %v", gw.Name, got)
		}
		if gw.Name == "down" && len(gw.Status.Conditions) != 1 {
			t.Errorf("slim Gateway keeps conditions %+v", gw.Status.Conditions)
		}
	}
	for _, c := range []struct {
		desc      string
		parents   []string
		accepted  []bool
		unhealthy bool
	}{
		{"one programmed parent", []string{"up"}, []bool{true}, false},
		{"one unprogrammed parent", []string{"down"}, []bool{true}, true},
		{"every parent unprogrammed", []string{"down", "down2"}, []bool{true, true}, true},
		{"one of two programmed", []string{"down", "up"}, []bool{true, true}, false},
		{"no condition yet: not down", []string{"unknown"}, []bool{true}, false},
		{"the programmed parent did not accept it", []string{"down", "up"}, []bool{true, false}, true},
		{"no known parent", []string{"missing"}, []bool{true}, false},
	} {
		rt := &route{kind: "HTTPRoute", accepted: c.accepted}
		rt.SetNamespace("default")
		ns := gwv1.Namespace("infra")
		for _, p := range c.parents {
			rt.parentRefs = append(rt.parentRefs, gwv1.ParentReference{Namespace: &ns, Name: gwv1.ObjectName(p)})
		}
		if got := routeUnhealthy(rt, ctx, func(string, string) (bool, bool) { return false, true }); got != c.unhealthy {
			t.Errorf("%s: unhealthy %v, want %v", c.desc, got, c.unhealthy)
		}
	}
}

func TestIngressBackendsAndHealth(t *testing.T) {
	backend := func(name string) networkingv1.IngressBackend {
		return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}}}
	}
	paths := func(names ...string) networkingv1.IngressRuleValue {
		var ps []networkingv1.HTTPIngressPath
		for _, n := range names {
			ps = append(ps, networkingv1.HTTPIngressPath{Path: "/" + n, Backend: backend(n)})
		}
		return networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: ps}}
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"},
		Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{
				{Host: "a.example.com", IngressRuleValue: paths("web", "web", "api")},
				{Host: "B.example.com", IngressRuleValue: paths("shop")},
				{Host: "c.example.com"},
			},
			TLS: []networkingv1.IngressTLS{{Hosts: []string{"a.example.com", "tls.example.com"}}},
		},
	}
	withDefault := ing.DeepCopy()
	withDefault.Spec.DefaultBackend = ptr(backend("def"))
	decode := func(in *networkingv1.Ingress) (pb, js Ingress) {
		b, err := in.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if err := pb.Unmarshal(b); err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(in)
		if err := js.UnmarshalJSON(j); err != nil {
			t.Fatal(err)
		}
		return pb, js
	}
	pb, js := decode(withDefault)
	want := []string{"apps/api", "apps/def", "apps/shop", "apps/web"}
	for form, in := range map[string]*Ingress{"protobuf": &pb, "json": &js} {
		if got := ingressBackends(in); !slices.Equal(got, want) {
			t.Errorf("%s: backends %q, want %q", form, got, want)
		}
		if !slices.Equal(in.backends, pb.backends) {
			t.Errorf("%s: backends by host %+v, protobuf %+v", form, in.backends, pb.backends)
		}
	}
	plain, _ := decode(ing)
	for _, c := range []struct {
		desc    string
		ing     *Ingress
		unready []string // Services with slices and no ready endpoint
		hosts   []string
		all     bool
	}{
		{"no slices anywhere", &plain, nil, nil, false},
		{"a's backends down, b's up", &plain, []string{"web", "api"}, []string{"a.example.com."}, false},
		{"one of a's two down: a stays", &plain, []string{"web"}, nil, false},
		{"shop down: b (written in capitals) goes", &plain, []string{"shop"}, []string{"b.example.com."}, false},
		{"every backend down: all", &plain, []string{"web", "api", "shop"}, nil, true},
		{"the default backend keeps every host", &pb, []string{"web", "api", "shop"}, nil, false},
		{"the default backend down too: all", &pb, []string{"web", "api", "shop", "def"}, nil, true},
	} {
		h := func(_, name string) (bool, bool) {
			if slices.Contains(c.unready, name) {
				return true, false
			}
			return false, true
		}
		hosts, all := unhealthyHosts(c.ing, h)
		if !slices.Equal(hosts, c.hosts) || all != c.all {
			t.Errorf("%s: hosts %q all %v, want %q %v", c.desc, hosts, all, c.hosts, c.all)
		}
	}
}

func TestRouteBackendsHealth(t *testing.T) {
	svcRef := func(ns, name string) gwv1.HTTPBackendRef {
		r := gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name)}}}
		if ns != "" {
			n := gwv1.Namespace(ns)
			r.Namespace = &n
		}
		return r
	}
	other := svcRef("", "bucket")
	g, k := gwv1.Group("example.io"), gwv1.Kind("Bucket")
	other.Group, other.Kind = &g, &k
	hr := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "r"}}
	hr.Spec.Rules = []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{svcRef("", "web"), svcRef("other", "api"), other}}}
	for _, c := range []struct {
		desc       string
		unresolved bool
		health     map[string][2]bool // key → known, healthy; absent: unknown, healthy
		unhealthy  bool
	}{
		{"no slices: healthy", false, nil, false},
		{"one healthy", false, map[string][2]bool{"apps/web": {true, false}, "other/api": {true, true}}, false},
		{"none healthy", false, map[string][2]bool{"apps/web": {true, false}, "other/api": {true, false}}, true},
		{"ResolvedRefs False: an unknown one does not count", true, map[string][2]bool{"apps/web": {true, false}}, true},
		{"ResolvedRefs False with a known healthy one", true, map[string][2]bool{"apps/web": {true, true}}, false},
	} {
		in := hr.DeepCopy()
		if c.unresolved {
			in.Status.Parents = []gwv1.RouteParentStatus{{Conditions: []metav1.Condition{{Type: string(gwv1.RouteConditionResolvedRefs), Status: metav1.ConditionFalse}}}}
		}
		obj, err := slimRouteBackends(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := routeBackends(obj); !slices.Equal(got, []string{"apps/web", "other/api"}) {
			t.Fatalf("backends %q", got)
		}
		h := func(ns, name string) (bool, bool) {
			v, ok := c.health[ns+"/"+name]
			if !ok {
				return false, true
			}
			return v[0], v[1]
		}
		if got := routeUnhealthy(obj, gwtNewContext(nil, nil), h); got != c.unhealthy {
			t.Errorf("%s: unhealthy %v", c.desc, got)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// Through a ListenerSet: the route's health is that of the ListenerSet's Gateway.
func TestRouteHealthThroughListenerSet(t *testing.T) {
	down := healthGateway("down", metav1.ConditionFalse)
	up := healthGateway("up", metav1.ConditionTrue)
	ctx := gwtNewContext([]*gwv1.Gateway{down, up}, nil)
	ctx.listenerSets = map[string]*gwv1.ListenerSet{}
	for _, gw := range []string{"down", "up"} {
		ns := gwv1.Namespace("infra")
		ctx.listenerSets["infra/ls-"+gw] = &gwv1.ListenerSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "ls-" + gw},
			Spec:       gwv1.ListenerSetSpec{ParentRef: gwv1.ParentGatewayReference{Name: gwv1.ObjectName(gw), Namespace: &ns}},
		}
	}
	g, k := gwv1.Group(gwv1.GroupName), gwv1.Kind("ListenerSet")
	for _, c := range []struct {
		parents   []string
		unhealthy bool
	}{
		{[]string{"ls-down"}, true},
		{[]string{"ls-up"}, false},
		{[]string{"ls-down", "ls-up"}, false},
	} {
		rt := &route{kind: "HTTPRoute"}
		rt.SetNamespace("infra")
		for _, p := range c.parents {
			rt.parentRefs = append(rt.parentRefs, gwv1.ParentReference{Group: &g, Kind: &k, Name: gwv1.ObjectName(p)})
			rt.accepted = append(rt.accepted, true)
		}
		if got := routeUnhealthy(rt, ctx, func(string, string) (bool, bool) { return false, true }); got != c.unhealthy {
			t.Errorf("parents %q: unhealthy %v, want %v", c.parents, got, c.unhealthy)
		}
	}
}

// A route attached to a Programmed Gateway and to one that is not: the
// records of the latter's addresses alone are unhealthy.
func TestRouteDownRecords(t *testing.T) {
	gw := func(name, addr string, programmed metav1.ConditionStatus) *gwv1.Gateway {
		g := testutil.Gateway("infra", name, []string{addr, "shared.lb.example.net"}, testutil.Listener("http", gwv1.HTTPProtocolType, 80, "*.example.com"))
		g.Status.Conditions = []metav1.Condition{{Type: string(gwv1.GatewayConditionProgrammed), Status: programmed}}
		slim, _ := slimGateway(g)
		return slim.(*gwv1.Gateway)
	}
	for _, c := range []struct {
		desc   string
		status [2]metav1.ConditionStatus
		down   []string
	}{
		{"both programmed", [2]metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionTrue}, nil},
		{"gw2 not programmed: its address alone", [2]metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse}, []string{"192.0.2.2"}},
		{"neither: none here (the route is unhealthy as a whole)", [2]metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionFalse}, nil},
	} {
		ctx := gwtNewContext([]*gwv1.Gateway{gw("gw1", "192.0.2.1", c.status[0]), gw("gw2", "192.0.2.2", c.status[1])}, nil)
		rt := &route{kind: "HTTPRoute", hostnames: []gwv1.Hostname{"a.example.com"}, accepted: []bool{true, true}}
		rt.SetNamespace("infra")
		for _, p := range []string{"gw1", "gw2"} {
			rt.parentRefs = append(rt.parentRefs, gwv1.ParentReference{Name: gwv1.ObjectName(p)})
		}
		cfg := gwtConfig()
		res := routeRecords(rt, ctx, cfg)
		down := routeDownRecords(rt, ctx, cfg)
		var got []string
		for _, rr := range res.RRs {
			if down != nil && down(rr) {
				got = append(got, strings.Fields(rr.String())[4])
			}
		}
		if !slices.Equal(got, c.down) {
			t.Errorf("%s: down records %q, want %q (of %v)", c.desc, got, c.down, res.RRs)
		}
		if (down == nil) != (c.down == nil) {
			t.Errorf("%s: predicate %v", c.desc, down != nil)
		}
	}
}
