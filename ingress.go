package gateway

import (
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
)

// legacyIngressClassAnnotation is how Ingresses named their class before spec.ingressClassName.
const legacyIngressClassAnnotation = "kubernetes.io/ingress.class"

// ingressRecords returns the records an Ingress publishes: its rule and TLS
// hosts (and hostname annotations) pointing at the load balancer addresses in
// its status, or at its target annotation. defaultClass is the cluster's
// default IngressClass, or "" (see ingressClassAllowed).
func ingressRecords(ing *networkingv1.Ingress, c *sourceConfig, defaultClass string) result {
	var r result
	if ignored(&ing.ObjectMeta) || !ingressClassAllowed(ing, c.ingressClasses, defaultClass) {
		return r
	}
	t, ok := annotationTargets(&r, &ing.ObjectMeta)
	if !ok {
		for _, lb := range ing.Status.LoadBalancer.Ingress {
			t.addIP(&r, lb.IP, "status.loadBalancer")
			t.add(&r, lb.Hostname, "status.loadBalancer")
		}
	}
	if t.empty() {
		return r
	}
	var names []string
	for _, rule := range ing.Spec.Rules {
		if rule.Host != "" {
			names = append(names, zoneNames(&r, rule.Host, c.zones, false, "spec.rules")...)
		}
	}
	for _, tls := range ing.Spec.TLS {
		for _, h := range tls.Hosts {
			if h != "" {
				names = append(names, zoneNames(&r, h, c.zones, false, "spec.tls")...)
			}
		}
	}
	names = append(names, annotationHostnames(&r, &ing.ObjectMeta, c.zones)...)
	r.publish(uniqueNames(names), t, objectTTL(&r, &ing.ObjectMeta, c.ttl))
	return r
}

// ingressClassAllowed reports whether the Ingress's class passes the filter.
// With no filter every Ingress passes; with one, an Ingress without a class
// (neither spec.ingressClassName nor the legacy annotation) has the cluster's
// default class, as its ingress controller sees it, and passes when that is
// listed; without a default class it does not pass.
func ingressClassAllowed(ing *networkingv1.Ingress, classes []string, defaultClass string) bool {
	if len(classes) == 0 {
		return true
	}
	class, legacy := ing.Annotations[legacyIngressClassAnnotation]
	if ing.Spec.IngressClassName != nil {
		class = *ing.Spec.IngressClassName
	} else if !legacy {
		class = defaultClass
	}
	return class != "" && slices.Contains(classes, class)
}

func slimIngress(obj any) (any, error) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return obj, nil // a cache.DeletedFinalStateUnknown
	}
	out := &networkingv1.Ingress{ObjectMeta: slimMeta(ing.ObjectMeta), Status: ing.Status}
	out.Spec.IngressClassName = ing.Spec.IngressClassName
	for _, r := range ing.Spec.Rules {
		out.Spec.Rules = append(out.Spec.Rules, networkingv1.IngressRule{Host: r.Host})
	}
	for _, t := range ing.Spec.TLS {
		out.Spec.TLS = append(out.Spec.TLS, networkingv1.IngressTLS{Hosts: t.Hosts})
	}
	return out, nil
}
