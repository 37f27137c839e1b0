package gateway

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The informers keep slimmed copies of the objects: only the fields the
// sources read. This keeps memory per object small in large clusters.

// readAnnotations are the annotations any source reads.
var readAnnotations = slices.Concat(hostnameAnnotations, targetAnnotations, ttlAnnotations, []string{legacyIngressClassAnnotation})

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
