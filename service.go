package gateway

import (
	"strings"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
)

// serviceRecords returns the records a Service publishes.
//
// A LoadBalancer Service publishes <name>.<namespace>.<zone> for every zone and
// the names of its hostname annotations, pointing at spec.externalIPs and the
// load balancer addresses in its status (or at its target annotation); each
// named port adds an SRV record _<port>._<proto>.<name>.<namespace>.<zone>.
// An ExternalName Service publishes the same names as a CNAME to
// spec.externalName. Other Services publish nothing: cluster IPs never leave
// the cluster.
func serviceRecords(svc *corev1.Service, c *sourceConfig) result {
	var r result
	if ignored(&svc.ObjectMeta) {
		return r
	}
	var t targets
	switch svc.Spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		var ok bool
		if t, ok = annotationTargets(&r, &svc.ObjectMeta); !ok {
			t = serviceAddresses(&r, svc)
		}
	case corev1.ServiceTypeExternalName:
		t.add(&r, svc.Spec.ExternalName, "spec.externalName")
		t.ips = nil // an ExternalName is a name, never an address
	default:
		return r
	}
	if t.empty() {
		return r
	}
	ttl := objectTTL(&r, &svc.ObjectMeta, c.ttl)
	own := serviceNames(&r, svc, c.zones)
	names := append(own, annotationHostnames(&r, &svc.ObjectMeta, c.zones)...)
	r.publish(uniqueNames(names), t, ttl)
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		r.rrs = append(r.rrs, serviceSRV(svc, own, ttl)...)
	}
	return r
}

// serviceAddresses returns a LoadBalancer Service's external IPs and load balancer addresses.
func serviceAddresses(r *result, svc *corev1.Service) targets {
	var t targets
	for _, ip := range svc.Spec.ExternalIPs {
		t.add(r, ip, "spec.externalIPs")
	}
	for _, lb := range svc.Status.LoadBalancer.Ingress {
		t.add(r, lb.IP, "status.loadBalancer")
		t.add(r, lb.Hostname, "status.loadBalancer")
	}
	return t
}

// serviceNames returns <name>.<namespace>.<zone> for every zone.
func serviceNames(r *result, svc *corev1.Service, zones []string) []string {
	names := make([]string, 0, len(zones))
	for _, z := range zones {
		name := strings.ToLower(svc.Name + "." + svc.Namespace + "." + z)
		if _, ok := dns.IsDomainName(name); !ok || len(name) > 254 {
			r.warnf("name %s is not a valid domain name", name)
			continue
		}
		names = append(names, name)
	}
	return names
}

// serviceSRV returns _<port>._<proto>.<owner> SRV records for every named port.
func serviceSRV(svc *corev1.Service, owners []string, ttl uint32) []dns.RR {
	var rrs []dns.RR
	for _, p := range svc.Spec.Ports {
		if p.Name == "" || checkLabel(p.Name) != nil {
			continue
		}
		proto := strings.ToLower(string(p.Protocol))
		if proto == "" {
			proto = "tcp"
		}
		for _, owner := range owners {
			rrs = append(rrs, &dns.SRV{
				Hdr:      dns.RR_Header{Name: "_" + strings.ToLower(p.Name) + "._" + proto + "." + owner, Rrtype: dns.TypeSRV, Class: dns.ClassINET, Ttl: ttl},
				Priority: 0, Weight: 100, Port: uint16(p.Port), Target: owner,
			})
		}
	}
	return rrs
}
