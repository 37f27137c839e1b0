package source

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IngressClasses publish nothing: with ingressClasses set, the cluster's
// default IngressClass is the class of an Ingress that names none. Their
// informer reads their metadata only, as for Namespaces.

// defaultClassAnnotation marks the default IngressClass.
const defaultClassAnnotation = "ingressclass.kubernetes.io/is-default-class"

// DefaultIngressClass returns the name of the default IngressClass among
// classes, or "": as Kubernetes's DefaultIngressClass admission plugin
// chooses it, the newest of those annotated is-default-class "true" (by
// creation time, then by name).
func DefaultIngressClass(classes []*metav1.PartialObjectMetadata) string {
	var defaults []*metav1.PartialObjectMetadata
	for _, c := range classes {
		if c.Annotations[defaultClassAnnotation] == "true" {
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
	c, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	out := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: c.Name, UID: c.UID, ResourceVersion: c.ResourceVersion, CreationTimestamp: c.CreationTimestamp,
	}}
	if v, ok := c.Annotations[defaultClassAnnotation]; ok {
		out.Annotations = map[string]string{defaultClassAnnotation: v}
	}
	return out, nil
}
