package watchtest

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// Create creates an Ingress or a Service in client.
func Create(client kubernetes.Interface, obj runtime.Object) error {
	ctx := context.Background()
	var err error
	switch o := obj.(type) {
	case *networkingv1.Ingress:
		_, err = client.NetworkingV1().Ingresses(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Service:
		_, err = client.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("watchtest.Create: %T", obj)
	}
	return err
}
