package testutil

import (
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// IngressLB turns addresses into Ingress load balancer entries: an IP goes in
// the ip field, anything else in the hostname field.
func IngressLB(addrs ...string) networkingv1.IngressStatus {
	var st networkingv1.IngressStatus
	for _, a := range addrs {
		if _, err := netip.ParseAddr(a); err == nil {
			st.LoadBalancer.Ingress = append(st.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{IP: a})
		} else {
			st.LoadBalancer.Ingress = append(st.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{Hostname: a})
		}
	}
	return st
}

// ServiceLB is IngressLB for Services.
func ServiceLB(addrs ...string) corev1.ServiceStatus {
	var st corev1.ServiceStatus
	for _, a := range addrs {
		if _, err := netip.ParseAddr(a); err == nil {
			st.LoadBalancer.Ingress = append(st.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: a})
		} else {
			st.LoadBalancer.Ingress = append(st.LoadBalancer.Ingress, corev1.LoadBalancerIngress{Hostname: a})
		}
	}
	return st
}

func BenchIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", 2+i>>16, byte(i>>8), byte(i)) }

// BenchMeta is the metadata the API server gives an object of test/bench.
func BenchMeta(name string, i int) metav1.ObjectMeta {
	created := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second))
	return metav1.ObjectMeta{
		Name: name, Namespace: "k8sgw-bench",
		UID:               types.UID(fmt.Sprintf("6f1e2d3c-4b5a-4978-8a6b-%012d", i)),
		ResourceVersion:   fmt.Sprint(1000000 + i),
		Generation:        1,
		CreationTimestamp: created,
		Labels:            map[string]string{"app.kubernetes.io/part-of": "k8sgw-bench"},
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "bench", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &created, FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/part-of":{}}},"f:spec":{}}`)}},
			{Manager: "bench", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &created, FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:loadBalancer":{"f:ingress":{}}}}`)}, Subresource: "status"},
		},
	}
}

func BenchIngress(i int) *networkingv1.Ingress {
	name := fmt.Sprintf("i%d", i)
	return &networkingv1.Ingress{
		ObjectMeta: BenchMeta(name, i),
		Spec:       networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: name + ".example.com"}}},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
			Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: BenchIP(i)}},
		}},
	}
}

func BenchService(i int) *corev1.Service {
	no, single, cluster, vip := false, corev1.IPFamilyPolicySingleStack, corev1.ServiceInternalTrafficPolicyCluster, corev1.LoadBalancerIPModeVIP
	clusterIP := fmt.Sprintf("10.96.%d.%d", byte(i>>8), byte(i))
	return &corev1.Service{
		ObjectMeta: BenchMeta(fmt.Sprintf("s%d", i), i),
		Spec: corev1.ServiceSpec{
			Type:                          corev1.ServiceTypeLoadBalancer,
			Ports:                         []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(80)}},
			ClusterIP:                     clusterIP,
			ClusterIPs:                    []string{clusterIP},
			IPFamilies:                    []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy:                &single,
			SessionAffinity:               corev1.ServiceAffinityNone,
			ExternalTrafficPolicy:         corev1.ServiceExternalTrafficPolicyCluster,
			InternalTrafficPolicy:         &cluster,
			AllocateLoadBalancerNodePorts: &no,
		},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{
			Ingress: []corev1.LoadBalancerIngress{{IP: BenchIP(i), IPMode: &vip}},
		}},
	}
}

func BenchClusterIPService(i int) *corev1.Service {
	svc := BenchService(i)
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	svc.Spec.AllocateLoadBalancerNodePorts = nil
	svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090, TargetPort: intstr.FromString("metrics")})
	svc.Status = corev1.ServiceStatus{}
	return svc
}

// BenchHTTPRoute is an HTTPRoute of one hostname and one rule attached to
// a shared Gateway, with the status a controller writes.
func BenchHTTPRoute(i int) *gwv1.HTTPRoute {
	name, ns, gw := fmt.Sprintf("r%d", i), gwv1.Namespace("infra"), gwv1.ObjectName("shared")
	port, prefix, kind, group := gwv1.PortNumber(8080), gwv1.PathMatchPathPrefix, gwv1.Kind("Gateway"), gwv1.Group(gwv1.GroupName)
	ref := gwv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: gw}
	created := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	conditions := []metav1.Condition{
		{Type: "Accepted", Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: created, Reason: "Accepted", Message: "Route is accepted"},
		{Type: "ResolvedRefs", Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: created, Reason: "ResolvedRefs", Message: "Resolved all the Object references for the Route"},
	}
	meta := BenchMeta(name, i)
	meta.ManagedFields[0].APIVersion = gwv1.GroupVersion.String()
	return &gwv1.HTTPRoute{
		ObjectMeta: meta,
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{ref}}, // the CRD defaults group and kind
			Hostnames:       []gwv1.Hostname{gwv1.Hostname(name + ".example.com")},
			Rules: []gwv1.HTTPRouteRule{{
				Matches:     []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: &prefix, Value: new("/")}}},
				BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: &port}}}},
			}},
		},
		Status: gwv1.HTTPRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{
			{ParentRef: ref, ControllerName: "example.com/gateway-controller", Conditions: conditions},
		}}},
	}
}
