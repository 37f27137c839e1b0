package gateway

import (
	"strings"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
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
		if len(t.ips) > 0 {
			// An ExternalName is a name, never an address (the API server accepts
			// "192.0.2.1" as one: it is a valid DNS subdomain).
			r.warnf("spec.externalName %q is an IP address, not a hostname: nothing published", svc.Spec.ExternalName)
			t.ips = nil
		}
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
		r.rrs = append(r.rrs, serviceSRV(&r, svc, own, t, c.zones, ttl)...)
	}
	return r
}

// serviceAddresses returns a LoadBalancer Service's external IPs and load balancer addresses.
func serviceAddresses(r *result, svc *corev1.Service) targets {
	var t targets
	for _, ip := range svc.Spec.ExternalIPs {
		t.addIP(r, ip, "spec.externalIPs")
	}
	for _, lb := range svc.Status.LoadBalancer.Ingress {
		t.addIP(r, lb.IP, "status.loadBalancer")
		t.add(r, lb.Hostname, "status.loadBalancer")
	}
	return t
}

// serviceNames returns <name>.<namespace>.<zone> for every forward zone.
func serviceNames(r *result, svc *corev1.Service, zones []string) []string {
	// The API server makes both DNS labels; checking them here keeps a dot or
	// an escape in either from moving the name into another zone.
	if checkLabel(strings.ToLower(svc.Name)) != nil || checkLabel(strings.ToLower(svc.Namespace)) != nil {
		r.warnf("name %q or namespace %q is not a DNS label", svc.Name, svc.Namespace)
		return nil
	}
	names := make([]string, 0, len(zones))
	for _, z := range zones {
		if isReverseZone(z) {
			continue
		}
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
//
// An SRV target must not be an alias (RFC 2782): with addresses, the target
// is the owner name, which holds them; when the load balancer reports only a
// hostname, the owner name is a CNAME, so the target is that hostname itself.
// A hostname inside the zones may itself be a CNAME there: then no SRV.
func serviceSRV(r *result, svc *corev1.Service, owners []string, t targets, zones []string, ttl uint32) []dns.RR {
	target := ""
	if len(t.ips) == 0 {
		if len(t.hosts) == 0 {
			return nil
		}
		target = t.hosts[0]
	}
	var rrs []dns.RR
	for _, p := range svc.Spec.Ports {
		port := strings.ToLower(p.Name)
		proto := strings.ToLower(string(p.Protocol))
		if proto == "" {
			proto = "tcp"
		}
		if port == "" || checkLabel("_"+port) != nil || checkLabel("_"+proto) != nil || p.Port < 1 || p.Port > 65535 {
			continue
		}
		if target != "" && index.ZoneOf(zones, target) >= 0 {
			r.warnf("no SRV records: the load balancer's hostname %s is inside the zones, where it may be an alias (RFC 2782)", target)
			return nil
		}
		for _, owner := range owners {
			name := "_" + port + "._" + proto + "." + owner
			if len(name) > 254 {
				continue // too long under a long zone
			}
			srvTarget := target
			if srvTarget == "" {
				srvTarget = owner
			}
			rrs = append(rrs, &dns.SRV{
				Hdr:      dns.RR_Header{Name: name, Rrtype: dns.TypeSRV, Class: dns.ClassINET, Ttl: ttl},
				Priority: 0, Weight: 100, Port: uint16(p.Port), Target: srvTarget,
			})
		}
	}
	return rrs
}

func slimService(obj any) (any, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return obj, nil
	}
	out := &corev1.Service{ObjectMeta: slimMeta(svc.ObjectMeta)}
	out.Spec.Type = svc.Spec.Type
	out.Spec.ExternalName = svc.Spec.ExternalName
	out.Spec.ExternalIPs = svc.Spec.ExternalIPs
	for _, p := range svc.Spec.Ports {
		out.Spec.Ports = append(out.Spec.Ports, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, Port: p.Port})
	}
	out.Status.LoadBalancer = svc.Status.LoadBalancer
	return out, nil
}
