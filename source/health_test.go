package source

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
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
		if got, want := GatewayUnprogrammed(gw), gw.Name == "down" || gw.Name == "down2"; got != want {
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
		if got := RouteUnhealthy(rt, ctx); got != c.unhealthy {
			t.Errorf("%s: unhealthy %v, want %v", c.desc, got, c.unhealthy)
		}
	}
}
