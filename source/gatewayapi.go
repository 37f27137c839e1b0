package source

import (
	"net/netip"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// gatewayRecords returns what a Gateway publishes by itself: the names of its
// hostname annotations, pointing at its addresses, when the Gateway passes
// the class filter and the labelSelector option. Listener hostnames are
// published through the routes attached to them, not by the Gateway.
//
// The warnings name the Gateway's addresses of types other than IPAddress and
// Hostname, which nothing publishes: the controller logs them once per
// change of the Gateway's key, not once per route.
func gatewayRecords(gw *gwv1.Gateway, c *Config) Result {
	var r Result
	if !gatewayClassAllowed(gw, c.GatewayClasses) {
		return r
	}
	warnAddressTypes(&r, gw)
	meta := apiMeta{&gw.ObjectMeta}
	if meta.ignored() || c.GatewaySelector != nil && !c.GatewaySelector.Matches(labels.Set(gw.Labels)) {
		return r
	}
	names := annotationHostnames(&r, meta, c.Zones)
	if len(names) == 0 {
		return r
	}
	c.publish(&r, uniqueNames(names), gatewayTargets(&r, gw), objectTTL(&r, meta, c.TTL))
	return r
}

func isGatewayRef(ref gwv1.ParentReference) bool {
	return (ref.Group == nil || *ref.Group == gwv1.GroupName) && (ref.Kind == nil || *ref.Kind == "Gateway")
}

func gatewayClassAllowed(gw *gwv1.Gateway, classes []string) bool {
	return len(classes) == 0 || slices.Contains(classes, string(gw.Spec.GatewayClassName))
}

// gatewayTargets returns the Gateway's target annotation or its status addresses.
func gatewayTargets(r *Result, gw *gwv1.Gateway) targets {
	if t, ok := annotationTargets(r, apiMeta{&gw.ObjectMeta}); ok {
		return t
	}
	var t targets
	for _, a := range gw.Status.Addresses {
		switch {
		case a.Type == nil || *a.Type == gwv1.IPAddressType:
			if _, err := netip.ParseAddr(a.Value); err != nil {
				r.warnf("invalid IP %q in status.addresses", a.Value)
				continue
			}
			t.add(r, a.Value, "status.addresses")
		case *a.Type == gwv1.HostnameAddressType:
			t.add(r, a.Value, "status.addresses")
		}
	}
	return t
}

// warnAddressTypes warns of each status address of a type that is neither
// IPAddress nor Hostname (NamedAddress, or a domain-prefixed type of an
// implementation): such an address is ignored, the others are published.
func warnAddressTypes(r *Result, gw *gwv1.Gateway) {
	for _, a := range gw.Status.Addresses {
		if a.Type != nil && *a.Type != gwv1.IPAddressType && *a.Type != gwv1.HostnameAddressType {
			r.warnf("status.addresses: %q of type %s ignored: only IPAddress and Hostname addresses are published", a.Value, *a.Type)
		}
	}
}

func slimGateway(obj any) (any, error) {
	gw, ok := obj.(*gwv1.Gateway)
	if !ok {
		return obj, nil
	}
	out := &gwv1.Gateway{ObjectMeta: slimMeta(gw.ObjectMeta)}
	// The labels, for the labelSelector option on the Gateway's own names.
	out.Labels = gw.Labels
	out.Spec.GatewayClassName = gw.Spec.GatewayClassName
	out.Spec.AllowedListeners = gw.Spec.AllowedListeners
	out.Spec.DefaultScope = gw.Spec.DefaultScope
	for _, l := range gw.Spec.Listeners {
		out.Spec.Listeners = append(out.Spec.Listeners, gwv1.Listener{
			Name: l.Name, Hostname: l.Hostname, Port: l.Port, Protocol: l.Protocol, AllowedRoutes: l.AllowedRoutes,
		})
	}
	out.Status.Addresses = gw.Status.Addresses
	out.Status.Conditions = programmedCondition(gw.Status.Conditions) // for the health option
	return out, nil
}
