package source

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestDefaultIngressClass: the default is chosen as the DefaultIngressClass
// admission plugin chooses it.
func TestDefaultIngressClass(t *testing.T) {
	for _, tc := range []struct {
		name    string
		classes []*metav1.PartialObjectMetadata
		want    string
	}{
		{name: "none"},
		{name: "no default", classes: []*metav1.PartialObjectMetadata{testutil.IngressClass("nginx", 1, ""), testutil.IngressClass("traefik", 2, "false")}},
		{name: "one default", classes: []*metav1.PartialObjectMetadata{testutil.IngressClass("nginx", 1, "true"), testutil.IngressClass("traefik", 2, "")}, want: "nginx"},
		{name: "several: the newest", classes: []*metav1.PartialObjectMetadata{testutil.IngressClass("new", 5, "true"), testutil.IngressClass("old", 1, "true")}, want: "new"},
		{name: "several of one age: by name", classes: []*metav1.PartialObjectMetadata{testutil.IngressClass("b", 1, "true"), testutil.IngressClass("a", 1, "true")}, want: "a"},
		{name: "only the value true", classes: []*metav1.PartialObjectMetadata{testutil.IngressClass("nginx", 1, "True")}},
	} {
		if got := DefaultIngressClass(tc.classes); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestIngressClassAllowedDefault: under ingressClasses, a class-less Ingress
// has the default class; a class given either way is its class.
func TestIngressClassAllowedDefault(t *testing.T) {
	ing := func(class *string, legacy string) *networkingv1.Ingress {
		i := testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1")
		i.Spec.IngressClassName = class
		if legacy != "" {
			i.Annotations = map[string]string{legacyIngressClassAnnotation: legacy}
		}
		return i
	}
	nginx, empty := "nginx", ""
	for _, tc := range []struct {
		name         string
		ing          *networkingv1.Ingress
		classes      []string
		defaultClass string
		want         bool
	}{
		{name: "class-less, default listed", ing: ing(nil, ""), classes: []string{"nginx"}, defaultClass: "nginx", want: true},
		{name: "class-less, default not listed", ing: ing(nil, ""), classes: []string{"nginx"}, defaultClass: "traefik"},
		{name: "class-less, no default", ing: ing(nil, ""), classes: []string{"nginx"}},
		{name: "legacy annotation is a class", ing: ing(nil, "traefik"), classes: []string{"nginx"}, defaultClass: "nginx"},
		{name: "spec class is a class", ing: ing(&nginx, ""), classes: []string{"nginx"}, defaultClass: "traefik", want: true},
		{name: "empty spec class", ing: ing(&empty, ""), classes: []string{"nginx"}, defaultClass: "nginx"},
		{name: "no filter", ing: ing(nil, ""), want: true},
	} {
		if got := ingressClassAllowed(k8sSlimIngress(tc.ing), tc.classes, tc.defaultClass); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
