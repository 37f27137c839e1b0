package testutil

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ---- Gateways ----

// Listener returns a listener; hostname "" means none.
func Listener(name string, proto gwv1.ProtocolType, port int32, hostname string) gwv1.Listener {
	l := gwv1.Listener{Name: gwv1.SectionName(name), Protocol: proto, Port: gwv1.PortNumber(port)}
	if hostname != "" {
		h := gwv1.Hostname(hostname)
		l.Hostname = &h
	}
	if proto == gwv1.HTTPSProtocolType || proto == gwv1.TLSProtocolType {
		mode := gwv1.TLSModeTerminate
		if proto == gwv1.TLSProtocolType {
			mode = gwv1.TLSModePassthrough
		}
		l.TLS = &gwv1.ListenerTLSConfig{Mode: &mode}
	}
	return l
}

func HTTPListener(name, hostname string) gwv1.Listener {
	return Listener(name, gwv1.HTTPProtocolType, 80, hostname)
}

// AllowFrom sets the namespaces a listener admits routes from.
func AllowFrom(l gwv1.Listener, from gwv1.FromNamespaces, selector *metav1.LabelSelector) gwv1.Listener {
	if l.AllowedRoutes == nil {
		l.AllowedRoutes = &gwv1.AllowedRoutes{}
	}
	l.AllowedRoutes.Namespaces = &gwv1.RouteNamespaces{From: &from, Selector: selector}
	return l
}

// AllowKinds sets the route kinds a listener admits, each "Kind" or "group/Kind".
func AllowKinds(l gwv1.Listener, kinds ...string) gwv1.Listener {
	if l.AllowedRoutes == nil {
		l.AllowedRoutes = &gwv1.AllowedRoutes{}
	}
	l.AllowedRoutes.Kinds = []gwv1.RouteGroupKind{}
	for _, k := range kinds {
		rgk := gwv1.RouteGroupKind{Kind: gwv1.Kind(k)}
		if g, kind, ok := strings.Cut(k, "/"); ok {
			group := gwv1.Group(g)
			rgk = gwv1.RouteGroupKind{Group: &group, Kind: gwv1.Kind(kind)}
		}
		l.AllowedRoutes.Kinds = append(l.AllowedRoutes.Kinds, rgk)
	}
	return l
}

// Gateway returns a Gateway of class "public" with status addresses: an IP
// is typed IPAddress, "untyped:IP" has no type, anything else is a Hostname.
// Fields the sources do not read are filled in, so that the slim tests see
// them dropped.
func Gateway(ns, name string, addrs []string, listeners ...gwv1.Listener) *gwv1.Gateway {
	gw := &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, Generation: 3, UID: types.UID("uid-" + name),
			Labels:      map[string]string{"app": "edge"},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"},
		},
		Spec: gwv1.GatewaySpec{
			GatewayClassName: "public",
			Listeners:        listeners,
			Infrastructure:   &gwv1.GatewayInfrastructure{Labels: map[gwv1.LabelKey]gwv1.LabelValue{"team": "edge"}},
		},
	}
	for _, a := range addrs {
		var sa gwv1.GatewayStatusAddress
		switch v, ok := strings.CutPrefix(a, "untyped:"); {
		case ok:
			sa.Value = v
		case strings.ContainsAny(a, ":") || (len(a) > 0 && a[0] >= '0' && a[0] <= '9'):
			t := gwv1.IPAddressType
			sa = gwv1.GatewayStatusAddress{Type: &t, Value: a}
		default:
			t := gwv1.HostnameAddressType
			sa = gwv1.GatewayStatusAddress{Type: &t, Value: a}
		}
		gw.Status.Addresses = append(gw.Status.Addresses, sa)
	}
	gw.Status.Conditions = []metav1.Condition{{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed", Message: "ok"}}
	for _, l := range listeners {
		gw.Status.Listeners = append(gw.Status.Listeners, gwv1.ListenerStatus{Name: l.Name, AttachedRoutes: 1})
	}
	return gw
}

func WithGatewayClass(gw *gwv1.Gateway, class string) *gwv1.Gateway {
	gw.Spec.GatewayClassName = gwv1.ObjectName(class)
	return gw
}

func Annotate(meta *metav1.ObjectMeta, kv ...string) {
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		meta.Annotations[kv[i]] = kv[i+1]
	}
}

func GatewayAnnotated(gw *gwv1.Gateway, kv ...string) *gwv1.Gateway {
	Annotate(&gw.ObjectMeta, kv...)
	return gw
}

// ---- parent references ----

// Ref is a parentRef to the Gateway name; modify it with the Ref* helpers.
func Ref(name string) gwv1.ParentReference {
	return gwv1.ParentReference{Name: gwv1.ObjectName(name)}
}

func RefNS(ref gwv1.ParentReference, ns string) gwv1.ParentReference {
	n := gwv1.Namespace(ns)
	ref.Namespace = &n
	return ref
}

func RefSection(ref gwv1.ParentReference, section string) gwv1.ParentReference {
	s := gwv1.SectionName(section)
	ref.SectionName = &s
	return ref
}

func RefPort(ref gwv1.ParentReference, port int32) gwv1.ParentReference {
	p := gwv1.PortNumber(port)
	ref.Port = &p
	return ref
}

func RefGK(ref gwv1.ParentReference, group, kind string) gwv1.ParentReference {
	g, k := gwv1.Group(group), gwv1.Kind(kind)
	ref.Group, ref.Kind = &g, &k
	return ref
}

// Parent is a parent status for ref with the Accepted condition status
// (metav1.ConditionTrue, False, Unknown), or without it when accepted is "".
func Parent(ref gwv1.ParentReference, accepted metav1.ConditionStatus) gwv1.RouteParentStatus {
	p := gwv1.RouteParentStatus{
		ParentRef:      ref,
		ControllerName: "example.com/gateway-controller",
		Conditions: []metav1.Condition{{
			Type: string(gwv1.RouteConditionResolvedRefs), Status: metav1.ConditionTrue, Reason: "ResolvedRefs", Message: "resolved",
		}},
	}
	if accepted != "" {
		p.Conditions = append(p.Conditions, metav1.Condition{
			Type: string(gwv1.RouteConditionAccepted), Status: accepted, Reason: "Accepted", Message: "from the controller", ObservedGeneration: 1,
		})
	}
	return p
}

// ---- routes ----

// Route describes a route of any kind; Object builds the typed object.
type Route struct {
	kind        string
	ns, name    string
	labels      map[string]string
	annotations map[string]string
	hostnames   []string // ignored for TCPRoute and UDPRoute
	refs        []gwv1.ParentReference
	parents     []gwv1.RouteParentStatus // nil: Accepted=True for every ref, as written
	noStatus    bool                     // no parent status at all
	scope       gwv1.GatewayDefaultScope // spec.useDefaultGateways
}

// NewRoute is a route in namespace "default" with an Accepted status for every parentRef.
func NewRoute(kind string, hostnames []string, refs ...gwv1.ParentReference) Route {
	return Route{kind: kind, ns: "default", name: "web", hostnames: hostnames, refs: refs}
}

func (r Route) InNS(ns string) Route { r.ns = ns; return r }

func (r Route) WithParents(ps ...gwv1.RouteParentStatus) Route { r.parents = ps; return r }

func (r Route) WithoutStatus() Route { r.noStatus = true; return r }

// UseDefaultGateways sets the route's spec.useDefaultGateways (GEP-3793).
func (r Route) UseDefaultGateways(scope gwv1.GatewayDefaultScope) Route { r.scope = scope; return r }

func (r Route) Annotated(kv ...string) Route {
	r.annotations = map[string]string{"unrelated.example.com/x": "y"}
	for i := 0; i+1 < len(kv); i += 2 {
		r.annotations[kv[i]] = kv[i+1]
	}
	return r
}

func (r Route) Labeled(kv ...string) Route {
	r.labels = map[string]string{"app": "web"}
	for i := 0; i+1 < len(kv); i += 2 {
		r.labels[kv[i]] = kv[i+1]
	}
	return r
}

func (r Route) status() []gwv1.RouteParentStatus {
	if r.noStatus {
		return nil
	}
	if r.parents != nil {
		return r.parents
	}
	var ps []gwv1.RouteParentStatus
	for _, ref := range r.refs {
		ps = append(ps, Parent(ref, metav1.ConditionTrue))
	}
	return ps
}

// Object returns the typed route, with fields the sources do not read filled in.
func (r Route) Object() any {
	meta := metav1.ObjectMeta{
		Name: r.name, Namespace: r.ns, Generation: 1, UID: "uid-route", ResourceVersion: "42",
		Labels: r.labels, Annotations: r.annotations,
	}
	var hosts []gwv1.Hostname
	for _, h := range r.hostnames {
		hosts = append(hosts, gwv1.Hostname(h))
	}
	common := gwv1.CommonRouteSpec{ParentRefs: r.refs, UseDefaultGateways: r.scope}
	status := gwv1.RouteStatus{Parents: r.status()}
	port := gwv1.PortNumber(8080)
	backend := gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: "backend", Port: &port}}
	switch r.kind {
	case "HTTPRoute":
		return &gwv1.HTTPRoute{ObjectMeta: meta, Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: common, Hostnames: hosts,
			Rules: []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: backend}}}},
		}, Status: gwv1.HTTPRouteStatus{RouteStatus: status}}
	case "GRPCRoute":
		return &gwv1.GRPCRoute{ObjectMeta: meta, Spec: gwv1.GRPCRouteSpec{
			CommonRouteSpec: common, Hostnames: hosts,
			Rules: []gwv1.GRPCRouteRule{{BackendRefs: []gwv1.GRPCBackendRef{{BackendRef: backend}}}},
		}, Status: gwv1.GRPCRouteStatus{RouteStatus: status}}
	case "TLSRoute":
		return &gwv1.TLSRoute{ObjectMeta: meta, Spec: gwv1.TLSRouteSpec{
			CommonRouteSpec: common, Hostnames: hosts,
			Rules: []gwv1.TLSRouteRule{{BackendRefs: []gwv1.BackendRef{backend}}},
		}, Status: gwv1.TLSRouteStatus{RouteStatus: status}}
	case "TCPRoute":
		return &gwv1.TCPRoute{ObjectMeta: meta, Spec: gwv1.TCPRouteSpec{
			CommonRouteSpec: common, Rules: []gwv1.TCPRouteRule{{BackendRefs: []gwv1.BackendRef{backend}}},
		}, Status: gwv1.TCPRouteStatus{RouteStatus: status}}
	case "UDPRoute":
		return &gwv1.UDPRoute{ObjectMeta: meta, Spec: gwv1.UDPRouteSpec{
			CommonRouteSpec: common, Rules: []gwv1.UDPRouteRule{{BackendRefs: []gwv1.BackendRef{backend}}},
		}, Status: gwv1.UDPRouteStatus{RouteStatus: status}}
	}
	panic("unknown route kind " + r.kind)
}

// AllowListeners sets a Gateway's allowedListeners; from "" leaves the field unset.
func AllowListeners(gw *gwv1.Gateway, from gwv1.FromNamespaces, selector *metav1.LabelSelector) *gwv1.Gateway {
	if from == "" {
		gw.Spec.AllowedListeners = nil
		return gw
	}
	gw.Spec.AllowedListeners = &gwv1.AllowedListeners{Namespaces: &gwv1.ListenerNamespaces{From: &from, Selector: selector}}
	return gw
}

// ListenerSet returns a ListenerSet in ns whose parent is the Gateway gwNS/gwName
// (gwNS "" leaves the parent's namespace unset), with its status Accepted as
// given ("" for no condition). Fields the plugin does not read are filled in.
func ListenerSet(ns, name, gwNS, gwName string, accepted metav1.ConditionStatus, listeners ...gwv1.Listener) *gwv1.ListenerSet {
	ls := &gwv1.ListenerSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 2, Labels: map[string]string{"team": "a"}},
		Spec:       gwv1.ListenerSetSpec{ParentRef: gwv1.ParentGatewayReference{Name: gwv1.ObjectName(gwName)}},
	}
	if gwNS != "" {
		n := gwv1.Namespace(gwNS)
		ls.Spec.ParentRef.Namespace = &n
	}
	for _, l := range listeners {
		ls.Spec.Listeners = append(ls.Spec.Listeners, gwv1.ListenerEntry{
			Name: l.Name, Hostname: l.Hostname, Port: l.Port, Protocol: l.Protocol, TLS: l.TLS, AllowedRoutes: l.AllowedRoutes,
		})
		ls.Status.Listeners = append(ls.Status.Listeners, gwv1.ListenerEntryStatus{Name: l.Name, AttachedRoutes: 1})
	}
	ls.Status.Conditions = []metav1.Condition{{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed"}}
	if accepted != "" {
		ls.Status.Conditions = append(ls.Status.Conditions, metav1.Condition{Type: "Accepted", Status: accepted, Reason: "Accepted"})
	}
	return ls
}

// ListenerSetRef is a parentRef to the ListenerSet ns/name.
func ListenerSetRef(ns, name string) gwv1.ParentReference {
	return RefNS(RefGK(Ref(name), gwv1.GroupName, "ListenerSet"), ns)
}
