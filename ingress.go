package gateway

import (
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// legacyIngressClassAnnotation is how Ingresses named their class before spec.ingressClassName.
const legacyIngressClassAnnotation = "kubernetes.io/ingress.class"

// ingress is what the informers keep of an Ingress (see object.go): what
// ingressRecords reads.
type ingress struct {
	objectMeta
	// class is spec.ingressClassName or else the legacy class annotation;
	// hasClass tells whether the Ingress has either.
	class    string
	hasClass bool
	// tls is where the TLS hosts start in hosts.
	tls int32
	// hosts are the hosts of spec.rules, then those of spec.tls, empty ones left out.
	hosts []string
	lb    []lbAddress // status.loadBalancer.ingress
}

// slimIngress converts an Ingress into an ingress. Anything else, such as a
// cache.DeletedFinalStateUnknown, passes unchanged.
func slimIngress(obj any) (any, error) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return obj, nil
	}
	out := &ingress{objectMeta: newObjectMeta(&ing.ObjectMeta)}
	if ing.Spec.IngressClassName != nil {
		out.class, out.hasClass = *ing.Spec.IngressClassName, true
	} else {
		out.class, out.hasClass = ing.Annotations[legacyIngressClassAnnotation]
	}
	n := len(ing.Spec.Rules)
	for _, t := range ing.Spec.TLS {
		n += len(t.Hosts)
	}
	if n > 0 {
		out.hosts = make([]string, 0, n)
	}
	for _, r := range ing.Spec.Rules {
		if r.Host != "" {
			out.hosts = append(out.hosts, r.Host)
		}
	}
	out.tls = int32(len(out.hosts))
	for _, t := range ing.Spec.TLS {
		for _, h := range t.Hosts {
			if h != "" {
				out.hosts = append(out.hosts, h)
			}
		}
	}
	out.hosts = slices.Clip(out.hosts)
	out.lb = lbAddresses(ing.Status.LoadBalancer.Ingress, func(lb *networkingv1.IngressLoadBalancerIngress) lbAddress {
		return lbAddress{lb.IP, lb.Hostname}
	})
	return out, nil
}

// DeepCopyObject implements runtime.Object.
func (in *ingress) DeepCopyObject() runtime.Object {
	out := *in
	out.objectMeta = in.objectMeta.deepCopy()
	out.hosts, out.lb = slices.Clone(in.hosts), slices.Clone(in.lb)
	return &out
}

// ingressRecords returns the records an Ingress publishes: its rule and TLS
// hosts (and hostname annotations) pointing at the load balancer addresses in
// its status, or at its target annotation. defaultClass is the cluster's
// default IngressClass, or "" (see ingressClassAllowed).
func ingressRecords(ing *ingress, c *sourceConfig, defaultClass string) result {
	var r result
	if ing.ignored() || !ingressClassAllowed(ing, c.ingressClasses, defaultClass) {
		return r
	}
	t, ok := annotationTargets(&r, ing)
	if !ok {
		addLBAddresses(&r, &t, ing.lb)
	}
	if t.empty() {
		return r
	}
	var names []string
	for i, h := range ing.hosts {
		origin := "spec.rules"
		if i >= int(ing.tls) {
			origin = "spec.tls"
		}
		names = append(names, zoneNames(&r, h, c.zones, false, origin)...)
	}
	names = append(names, annotationHostnames(&r, ing, c.zones)...)
	r.publish(uniqueNames(names), t, objectTTL(&r, ing, c.ttl))
	return r
}

// ingressClassAllowed reports whether the Ingress's class passes the filter.
// With no filter every Ingress passes; with one, an Ingress without a class
// (neither spec.ingressClassName nor the legacy annotation) has the cluster's
// default class, as its ingress controller sees it, and passes when that is
// listed; without a default class it does not pass.
func ingressClassAllowed(ing *ingress, classes []string, defaultClass string) bool {
	if len(classes) == 0 {
		return true
	}
	class := ing.class
	if !ing.hasClass {
		class = defaultClass
	}
	return class != "" && slices.Contains(classes, class)
}
