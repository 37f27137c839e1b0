package testutil

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Service returns a Service web in namespace apps of type typ with load
// balancer addresses (IPs in the ip field, names in the hostname field).
func Service(typ corev1.ServiceType, lb ...string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"},
		Spec:       corev1.ServiceSpec{Type: typ, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"}},
		Status:     ServiceLB(lb...),
	}
}

func AnnotateService(svc *corev1.Service, kv ...string) *corev1.Service {
	if svc.Annotations == nil {
		svc.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		svc.Annotations[kv[i]] = kv[i+1]
	}
	return svc
}

func WithPorts(svc *corev1.Service, ports ...corev1.ServicePort) *corev1.Service {
	svc.Spec.Ports = ports
	return svc
}

// Ingress returns an Ingress with rule hosts, TLS hosts and load balancer
// addresses (IPs in the ip field, names in the hostname field).
func Ingress(hosts, tlsHosts []string, lb ...string) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Status:     IngressLB(lb...),
	}
	for _, h := range hosts {
		ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{Host: h})
	}
	if len(tlsHosts) > 0 {
		ing.Spec.TLS = append(ing.Spec.TLS, networkingv1.IngressTLS{Hosts: tlsHosts, SecretName: "tls"})
	}
	return ing
}

func AnnotateIngress(ing *networkingv1.Ingress, kv ...string) *networkingv1.Ingress {
	if ing.Annotations == nil {
		ing.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		ing.Annotations[kv[i]] = kv[i+1]
	}
	return ing
}

func WithIngressClass(ing *networkingv1.Ingress, class string) *networkingv1.Ingress {
	ing.Spec.IngressClassName = &class
	return ing
}

func IngressClass(name string, created int64, isDefault string) *metav1.PartialObjectMetadata {
	c := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.Unix(created, 0)}}
	if isDefault != "" {
		c.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: isDefault} // the API's name of defaultClassAnnotation
	}
	return c
}

func NamedIngress(namespace, name string, hosts []string, lb ...string) *networkingv1.Ingress {
	ing := Ingress(hosts, nil, lb...)
	ing.Namespace, ing.Name = namespace, name
	return ing
}

func NamedService(namespace, name string, lb ...string) *corev1.Service {
	svc := Service(corev1.ServiceTypeLoadBalancer, lb...)
	svc.Namespace, svc.Name = namespace, name
	return svc
}

// ClaimingService is a LoadBalancer Service that claims hostnames (a comma-
// separated list) by the coredns.io/hostname annotation, created at second sec.
func ClaimingService(namespace, name string, sec int64, hostnames, ip string) *corev1.Service {
	svc := AnnotateService(NamedService(namespace, name, ip), "coredns.io/hostname", hostnames)
	svc.CreationTimestamp = metav1.NewTime(time.Unix(sec, 0))
	return svc
}

// EndpointSlice is an EndpointSlice of the Service service with one
// endpoint, ready or not.
func EndpointSlice(namespace, name, service string, ready bool) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}
}
