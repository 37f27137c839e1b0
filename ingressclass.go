package gateway

import (
	"sort"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IngressClasses publish nothing: with ingressClasses set, the cluster's
// default IngressClass is the class of an Ingress that names none.

// defaultIngressClass returns the name of the default IngressClass among
// classes, or "": as Kubernetes's DefaultIngressClass admission plugin
// chooses it, the newest of those annotated is-default-class "true" (by
// creation time, then by name).
func defaultIngressClass(classes []*networkingv1.IngressClass) string {
	var defaults []*networkingv1.IngressClass
	for _, c := range classes {
		if c.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			defaults = append(defaults, c)
		}
	}
	if len(defaults) == 0 {
		return ""
	}
	sort.Slice(defaults, func(i, j int) bool {
		a, b := defaults[i].CreationTimestamp, defaults[j].CreationTimestamp
		if !a.Equal(&b) {
			return b.Before(&a)
		}
		return defaults[i].Name < defaults[j].Name
	})
	return defaults[0].Name
}

// slimIngressClass keeps what defaultIngressClass reads.
func slimIngressClass(obj any) (any, error) {
	c, ok := obj.(*networkingv1.IngressClass)
	if !ok {
		return obj, nil
	}
	out := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{
		Name: c.Name, UID: c.UID, ResourceVersion: c.ResourceVersion, CreationTimestamp: c.CreationTimestamp,
	}}
	if v, ok := c.Annotations[networkingv1.AnnotationIsDefaultIngressClass]; ok {
		out.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: v}
	}
	return out, nil
}
