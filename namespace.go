package gateway

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespaces publish nothing: their labels decide which routes a Gateway
// listener admits (allowedRoutes.namespaces.selector), and under the delegated
// ownership policy their domains annotation says where they may publish.
// Their informer reads their metadata only (metav1.PartialObjectMetadata
// decodes the protobuf or JSON of any object).

func slimNamespace(obj any) (any, error) {
	ns, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	out := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: ns.Name, UID: ns.UID, ResourceVersion: ns.ResourceVersion, Labels: ns.Labels,
	}}
	if v, ok := ns.Annotations[domainsAnnotation]; ok {
		out.Annotations = map[string]string{domainsAnnotation: v}
	}
	return out, nil
}
