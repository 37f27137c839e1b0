package gateway

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespaces publish nothing: their labels decide which routes a Gateway
// listener admits (allowedRoutes.namespaces.selector).

func slimNamespace(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: ns.Name, UID: ns.UID, ResourceVersion: ns.ResourceVersion, Labels: ns.Labels,
	}}, nil
}
