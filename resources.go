package gateway

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// kind is a resource kind the plugin publishes records from.
type kind struct {
	name    string         // as written in the resources option
	object  runtime.Object // an empty object of the kind, for the informer
	listers func(client kubernetes.Interface, namespace string) (
		list func(context.Context, metav1.ListOptions) (runtime.Object, error),
		watch func(context.Context, metav1.ListOptions) (watch.Interface, error))
	transform cache.TransformFunc
	records   func(obj any, c *sourceConfig) result
}

// kinds lists every supported kind in the order the resources option documents.
var kinds = []*kind{
	{
		name:   "Ingress",
		object: &networkingv1.Ingress{},
		listers: func(client kubernetes.Interface, ns string) (
			func(context.Context, metav1.ListOptions) (runtime.Object, error),
			func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
			c := client.NetworkingV1().Ingresses(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) }, c.Watch
		},
		transform: slimIngress,
		records: func(obj any, c *sourceConfig) result {
			return ingressRecords(obj.(*networkingv1.Ingress), c)
		},
	},
	{
		name:   "Service",
		object: &corev1.Service{},
		listers: func(client kubernetes.Interface, ns string) (
			func(context.Context, metav1.ListOptions) (runtime.Object, error),
			func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
			c := client.CoreV1().Services(ns)
			return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) }, c.Watch
		},
		transform: slimService,
		records: func(obj any, c *sourceConfig) result {
			return serviceRecords(obj.(*corev1.Service), c)
		},
	},
}

// supportedResources returns the names of every supported kind.
func supportedResources() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

// resourceKind returns the canonical name of a resource, matched case-insensitively.
func resourceKind(name string) (string, bool) {
	for _, k := range kinds {
		if strings.EqualFold(k.name, name) {
			return k.name, true
		}
	}
	return "", false
}

func kindByName(name string) *kind {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	return nil
}
