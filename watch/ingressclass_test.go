package watch

import (
	"context"
	"testing"
	"time"

	"github.com/miekg/dns"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// TestControllerDefaultIngressClass: with ingressClasses set, the controller
// watches IngressClasses, and a class-less Ingress appears and goes as its
// default class comes and goes; without ingressClasses it watches none.
func TestControllerDefaultIngressClass(t *testing.T) {
	client := fake.NewSimpleClientset(testutil.NamedIngress("apps", "web", []string{"www.example.com"}, "192.0.2.1"))
	cfg := testConfig("example.com.")
	cfg.Sources.IngressClasses = []string{"nginx"}
	g := startPipeline(t, cfg, watchtest.API{Core: client})
	g.answers(t, "www.example.com.", dns.TypeA, nx)

	ctx := context.Background()
	classes := client.NetworkingV1().IngressClasses()
	c, err := classes.Create(ctx, &networkingv1.IngressClass{ObjectMeta: testutil.IngressClass("nginx", time.Now().Unix(), "true").ObjectMeta}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.answers(t, "www.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1"}))
	c.Annotations[networkingv1.AnnotationIsDefaultIngressClass] = "false"
	if _, err := classes.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	g.answers(t, "www.example.com.", dns.TypeA, nx)

	// Without ingressClasses, no IngressClass informer.
	g2 := startPipeline(t, testConfig("example.com."), watchtest.API{Core: client})
	for _, w := range g2.c.watches() {
		if w.Kind == source.IngressClassKind {
			t.Error("IngressClasses watched without ingressClasses")
		}
	}
	g2.answers(t, "www.example.com.", dns.TypeA, expect(t, "NOERROR", []string{"www.example.com. 60 IN A 192.0.2.1"}))
}
