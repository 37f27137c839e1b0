package source

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The experimental group of the XListenerSet kind that preceded ListenerSet
// (Gateway API v1.3 and v1.4, experimental channel).
const experimentalGroup = "gateway.networking.x-k8s.io"

// XListenerSetVersion is where the experimental XListenerSet is served.
var XListenerSetVersion = schema.GroupVersion{Group: experimentalGroup, Version: "v1alpha1"}

// ListenerSet is what the plugin reads of a ListenerSet (GEP-1713): the
// listeners a tenant attaches to a shared Gateway. The standard
// gateway.networking.k8s.io/v1 ListenerSet and the experimental XListenerSet
// read alike.
type ListenerSet struct {
	group, kind string // as a route's parentRef names it
	meta        *metav1.ObjectMeta
	parent      gwv1.ParentGatewayReference
	listeners   []gwv1.ListenerEntry
	accepted    bool // its status has Accepted=True
}

// newListenerSet converts a ListenerSet of the group and kind given.
func newListenerSet(group, kind string, o *gwv1.ListenerSet) *ListenerSet {
	return &ListenerSet{
		group: group, kind: kind, meta: &o.ObjectMeta,
		parent:    o.Spec.ParentRef,
		listeners: o.Spec.Listeners,
		accepted:  conditionTrue(o.Status.Conditions, string(gwv1.ListenerSetConditionAccepted)),
	}
}

func conditionTrue(conds []metav1.Condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// GatewayKey returns the namespace and name of the ListenerSet's parent
// Gateway; ok is false when the parent is not a Gateway.
func (ls *ListenerSet) GatewayKey() (namespace, name string, ok bool) {
	p := ls.parent
	if p.Group != nil && *p.Group != gwv1.GroupName || p.Kind != nil && *p.Kind != "Gateway" {
		return "", "", false
	}
	namespace = ls.meta.Namespace
	if p.Namespace != nil && *p.Namespace != "" {
		namespace = string(*p.Namespace)
	}
	return namespace, string(p.Name), true
}

// gatewayListeners returns the ListenerSet's listeners as Gateway listeners.
func (ls *ListenerSet) gatewayListeners() []gwv1.Listener {
	out := make([]gwv1.Listener, len(ls.listeners))
	for i, e := range ls.listeners {
		out[i] = gwv1.Listener{Name: e.Name, Hostname: e.Hostname, Port: e.Port, Protocol: e.Protocol, AllowedRoutes: e.AllowedRoutes}
	}
	return out
}

// isListenerSetRef reports whether a parentRef names a ListenerSet, standard
// or experimental.
func isListenerSetRef(ref gwv1.ParentReference) bool {
	group, kind := refGroupKind(ref)
	return group == gwv1.GroupName && kind == "ListenerSet" || group == experimentalGroup && kind == "XListenerSet"
}

// refGroupKind returns the group and kind of a parentRef, defaults applied.
func refGroupKind(ref gwv1.ParentReference) (group, kind string) {
	group, kind = gwv1.GroupName, "Gateway"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	return group, kind
}

// listenerSetAttached reports whether the ListenerSet is attached to the
// Gateway: the ListenerSet names it as its parent, the Gateway's
// allowedListeners admit the ListenerSet's namespace, and the ListenerSet's
// status says Accepted.
func listenerSetAttached(ls *ListenerSet, gw *gwv1.Gateway, nsLabels func(string) (map[string]string, bool)) bool {
	ns, name, ok := ls.GatewayKey()
	if !ok || ns != gw.Namespace || name != gw.Name || !ls.accepted {
		return false
	}
	return listenersAllowed(gw, ls.meta.Namespace, nsLabels)
}

// listenersAllowed applies a Gateway's spec.allowedListeners to the namespace
// of a ListenerSet: None (the default), Same, All, or Selector on the
// namespace's labels.
func listenersAllowed(gw *gwv1.Gateway, namespace string, nsLabels func(string) (map[string]string, bool)) bool {
	a := gw.Spec.AllowedListeners
	if a == nil || a.Namespaces == nil || a.Namespaces.From == nil {
		return false
	}
	switch *a.Namespaces.From {
	case gwv1.NamespacesFromAll:
		return true
	case gwv1.NamespacesFromSame:
		return namespace == gw.Namespace
	case gwv1.NamespacesFromSelector:
		return selectorMatchesNamespace(a.Namespaces.Selector, namespace, nsLabels)
	}
	return false
}

// selectorMatchesNamespace reports whether a namespace selector matches the
// labels of a namespace. A missing or invalid selector matches nothing, as
// does a namespace that is not known.
func selectorMatchesNamespace(selector *metav1.LabelSelector, namespace string, nsLabels func(string) (map[string]string, bool)) bool {
	if selector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return false
	}
	l, ok := nsLabels(namespace)
	return ok && sel.Matches(labels.Set(l))
}

// slimListenerSet keeps a ListenerSet's parent, listeners and Accepted condition.
func slimListenerSet(obj any) (any, error) {
	ls, ok := obj.(*gwv1.ListenerSet)
	if !ok {
		return obj, nil
	}
	out := &gwv1.ListenerSet{ObjectMeta: slimMeta(ls.ObjectMeta)}
	out.Spec.ParentRef = ls.Spec.ParentRef
	for _, l := range ls.Spec.Listeners {
		out.Spec.Listeners = append(out.Spec.Listeners, gwv1.ListenerEntry{
			Name: l.Name, Hostname: l.Hostname, Port: l.Port, Protocol: l.Protocol, AllowedRoutes: l.AllowedRoutes,
		})
	}
	for _, c := range ls.Status.Conditions {
		if c.Type == string(gwv1.ListenerSetConditionAccepted) {
			out.Status.Conditions = append(out.Status.Conditions, metav1.Condition{Type: c.Type, Status: c.Status})
		}
	}
	return out, nil
}
