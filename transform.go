package gateway

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The informers keep slimmed copies of the objects: only the fields the
// sources read. This keeps memory per object small in large clusters.

// readAnnotations are the annotations any source reads.
var readAnnotations = slices.Concat([]string{coreDNSHostnameAnnotation}, hostnameAnnotations, targetAnnotations, ttlAnnotations, []string{legacyIngressClassAnnotation})

func slimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		Name:            m.Name,
		Namespace:       m.Namespace,
		UID:             m.UID,
		ResourceVersion: m.ResourceVersion,
		Generation:      m.Generation,
	}
	if v, ok := m.Labels[ignoreLabel]; ok {
		out.Labels = map[string]string{ignoreLabel: v}
	}
	for _, k := range readAnnotations {
		if v, ok := m.Annotations[k]; ok {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = v
		}
	}
	return out
}

func slimIngress(obj any) (any, error) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return obj, nil // a cache.DeletedFinalStateUnknown
	}
	out := &networkingv1.Ingress{ObjectMeta: slimMeta(ing.ObjectMeta), Status: ing.Status}
	out.Spec.IngressClassName = ing.Spec.IngressClassName
	for _, r := range ing.Spec.Rules {
		out.Spec.Rules = append(out.Spec.Rules, networkingv1.IngressRule{Host: r.Host})
	}
	for _, t := range ing.Spec.TLS {
		out.Spec.TLS = append(out.Spec.TLS, networkingv1.IngressTLS{Hosts: t.Hosts})
	}
	return out, nil
}

func slimService(obj any) (any, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return obj, nil
	}
	out := &corev1.Service{ObjectMeta: slimMeta(svc.ObjectMeta)}
	out.Spec.Type = svc.Spec.Type
	out.Spec.ExternalName = svc.Spec.ExternalName
	out.Spec.ExternalIPs = svc.Spec.ExternalIPs
	for _, p := range svc.Spec.Ports {
		out.Spec.Ports = append(out.Spec.Ports, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, Port: p.Port})
	}
	out.Status.LoadBalancer = svc.Status.LoadBalancer
	return out, nil
}

func slimNamespace(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: ns.Name, UID: ns.UID, ResourceVersion: ns.ResourceVersion, Labels: ns.Labels,
	}}, nil
}

func slimGateway(obj any) (any, error) {
	gw, ok := obj.(*gwv1.Gateway)
	if !ok {
		return obj, nil
	}
	out := &gwv1.Gateway{ObjectMeta: slimMeta(gw.ObjectMeta)}
	out.Spec.GatewayClassName = gw.Spec.GatewayClassName
	for _, l := range gw.Spec.Listeners {
		out.Spec.Listeners = append(out.Spec.Listeners, gwv1.Listener{
			Name: l.Name, Hostname: l.Hostname, Port: l.Port, Protocol: l.Protocol, AllowedRoutes: l.AllowedRoutes,
		})
	}
	out.Status.Addresses = gw.Status.Addresses
	return out, nil
}

// slimRoute keeps a route's hostnames, parentRefs and parent statuses.
func slimRoute(obj any) (any, error) {
	switch o := obj.(type) {
	case *gwv1.HTTPRoute:
		out := &gwv1.HTTPRoute{ObjectMeta: slimMeta(o.ObjectMeta)}
		out.Spec.Hostnames, out.Spec.ParentRefs, out.Status.Parents = o.Spec.Hostnames, o.Spec.ParentRefs, slimParents(o.Status.Parents)
		return out, nil
	case *gwv1.GRPCRoute:
		out := &gwv1.GRPCRoute{ObjectMeta: slimMeta(o.ObjectMeta)}
		out.Spec.Hostnames, out.Spec.ParentRefs, out.Status.Parents = o.Spec.Hostnames, o.Spec.ParentRefs, slimParents(o.Status.Parents)
		return out, nil
	case *gwv1.TLSRoute:
		out := &gwv1.TLSRoute{ObjectMeta: slimMeta(o.ObjectMeta)}
		out.Spec.Hostnames, out.Spec.ParentRefs, out.Status.Parents = o.Spec.Hostnames, o.Spec.ParentRefs, slimParents(o.Status.Parents)
		return out, nil
	case *gwv1.TCPRoute:
		out := &gwv1.TCPRoute{ObjectMeta: slimMeta(o.ObjectMeta)}
		out.Spec.ParentRefs, out.Status.Parents = o.Spec.ParentRefs, slimParents(o.Status.Parents)
		return out, nil
	case *gwv1.UDPRoute:
		out := &gwv1.UDPRoute{ObjectMeta: slimMeta(o.ObjectMeta)}
		out.Spec.ParentRefs, out.Status.Parents = o.Spec.ParentRefs, slimParents(o.Status.Parents)
		return out, nil
	}
	return obj, nil
}

// slimParents keeps the parentRef and the Accepted condition of each parent status.
func slimParents(parents []gwv1.RouteParentStatus) []gwv1.RouteParentStatus {
	out := make([]gwv1.RouteParentStatus, 0, len(parents))
	for _, p := range parents {
		s := gwv1.RouteParentStatus{ParentRef: p.ParentRef}
		for _, c := range p.Conditions {
			if c.Type == string(gwv1.RouteConditionAccepted) {
				s.Conditions = append(s.Conditions, metav1.Condition{Type: c.Type, Status: c.Status})
			}
		}
		out = append(out, s)
	}
	return out
}
