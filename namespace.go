package gateway

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespaces publish nothing: their labels decide which routes a Gateway
// listener admits (allowedRoutes.namespaces.selector), and under the delegated
// ownership policy their domains annotation says where they may publish.

func slimNamespace(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil
	}
	out := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: ns.Name, UID: ns.UID, ResourceVersion: ns.ResourceVersion, Labels: ns.Labels,
	}}
	if v, ok := ns.Annotations[domainsAnnotation]; ok {
		out.Annotations = map[string]string{domainsAnnotation: v}
	}
	return out, nil
}
