package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/miekg/dns"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func icClass(name string, created int64, isDefault string) *metav1.PartialObjectMetadata {
	c := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.Unix(created, 0)}}
	if isDefault != "" {
		c.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: isDefault} // the API's name of defaultClassAnnotation
	}
	return c
}

// TestDefaultIngressClass: the default is chosen as the DefaultIngressClass
// admission plugin chooses it.
func TestDefaultIngressClass(t *testing.T) {
	for _, tc := range []struct {
		name    string
		classes []*metav1.PartialObjectMetadata
		want    string
	}{
		{name: "none"},
		{name: "no default", classes: []*metav1.PartialObjectMetadata{icClass("nginx", 1, ""), icClass("traefik", 2, "false")}},
		{name: "one default", classes: []*metav1.PartialObjectMetadata{icClass("nginx", 1, "true"), icClass("traefik", 2, "")}, want: "nginx"},
		{name: "several: the newest", classes: []*metav1.PartialObjectMetadata{icClass("new", 5, "true"), icClass("old", 1, "true")}, want: "new"},
		{name: "several of one age: by name", classes: []*metav1.PartialObjectMetadata{icClass("b", 1, "true"), icClass("a", 1, "true")}, want: "a"},
		{name: "only the value true", classes: []*metav1.PartialObjectMetadata{icClass("nginx", 1, "True")}},
	} {
		if got := defaultIngressClass(tc.classes); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestIngressClassAllowedDefault: under ingressClasses, a class-less Ingress
// has the default class; a class given either way is its class.
func TestIngressClassAllowedDefault(t *testing.T) {
	ing := func(class *string, legacy string) *networkingv1.Ingress {
		i := k8sIngress([]string{"www.example.com"}, nil, "192.0.2.1")
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

// TestControllerDefaultIngressClass: with ingressClasses set, the plugin
// watches IngressClasses, and a class-less Ingress appears and goes as its
// default class comes and goes; without ingressClasses it watches none.
func TestControllerDefaultIngressClass(t *testing.T) {
	client := fake.NewSimpleClientset(k8sNamedIngress("apps", "web", []string{"www.example.com"}, "192.0.2.1"))
	g := k8sStartGateway(t, client, []string{"example.com."}, func(g *Gateway) { g.ingressClasses = []string{"nginx"} })
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, k8sNX)

	ctx := context.Background()
	classes := client.NetworkingV1().IngressClasses()
	c, err := classes.Create(ctx, &networkingv1.IngressClass{ObjectMeta: icClass("nginx", time.Now().Unix(), "true").ObjectMeta}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1"}))
	c.Annotations[networkingv1.AnnotationIsDefaultIngressClass] = "false"
	if _, err := classes.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k8sAnswers(t, g, "www.example.com.", dns.TypeA, k8sNX)

	// Without ingressClasses, no IngressClass informer.
	g2 := k8sStartGateway(t, client, []string{"example.com."}, nil)
	for _, w := range k8sCtrl(g2).watches() {
		if w.kind == ingressClassKind {
			t.Error("IngressClasses watched without ingressClasses")
		}
	}
	k8sAnswers(t, g2, "www.example.com.", dns.TypeA, k8sExpect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1"}))
}
