package source

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespaces publish nothing: their labels decide which routes a Gateway
// listener admits (allowedRoutes.namespaces.selector), and under the delegated
// ownership policy their domains annotation says where they may publish.
// Their informer reads their metadata only (metav1.PartialObjectMetadata
// decodes the protobuf or JSON of any object).

// DomainsAnnotation on a Namespace lists the domains delegated to it
// (comma- or space-separated) under the delegated ownership policy.
const DomainsAnnotation = "k8s-gateway.dns/domains"

func slimNamespace(obj any) (any, error) {
	ns, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	out := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: ns.Name, UID: ns.UID, ResourceVersion: ns.ResourceVersion, Labels: ns.Labels,
	}}
	if v, ok := ns.Annotations[DomainsAnnotation]; ok {
		out.Annotations = map[string]string{DomainsAnnotation: v}
	}
	return out, nil
}

// NamespaceDomains returns the domains delegated to a Namespace by its
// annotation, and a warning naming the values that are not domain names.
func NamespaceDomains(meta metav1.Object) ([]string, []string) {
	var domains, warnings []string
	for _, d := range strings.FieldsFunc(meta.GetAnnotations()[DomainsAnnotation], func(r rune) bool { return r == ',' || r == ' ' }) {
		name, err := CanonicalName(d, false)
		if err != nil {
			warnings = append(warnings, "annotation "+DomainsAnnotation+": invalid domain "+d+": "+err.Error())
			continue
		}
		domains = append(domains, name)
	}
	return domains, warnings
}
