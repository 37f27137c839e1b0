package gateway

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// service is what the informers keep of a Service (see object.go): what
// serviceRecords, serviceSRV and nameserverRecords read.
type service struct {
	objectMeta
	typ          serviceType
	externalName string   // of an ExternalName Service
	externalIPs  []string // of any type: the nameservers' Services publish them
	// ports are the named ports of a LoadBalancer Service, those that SRV
	// records are made of.
	ports []servicePort
	lb    []lbAddress // status.loadBalancer.ingress
}

// serviceType is the spec.type of a Service, as far as the sources tell them apart.
type serviceType uint8

const (
	otherService serviceType = iota // ClusterIP, NodePort: nothing published
	loadBalancerService
	externalNameService
)

type servicePort struct {
	name     string
	protocol corev1.Protocol
	port     int32
}

// slimService converts a Service into a service. Anything else, such as a
// cache.DeletedFinalStateUnknown, passes unchanged.
func slimService(obj any) (any, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return obj, nil
	}
	out := &service{objectMeta: newObjectMeta(&svc.ObjectMeta)}
	switch svc.Spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		out.typ = loadBalancerService
		for _, p := range svc.Spec.Ports {
			if p.Name == "" {
				continue
			}
			if out.ports == nil {
				out.ports = make([]servicePort, 0, len(svc.Spec.Ports))
			}
			out.ports = append(out.ports, servicePort{name: p.Name, protocol: knownProtocol(p.Protocol), port: p.Port})
		}
	case corev1.ServiceTypeExternalName:
		out.typ = externalNameService
		out.externalName = svc.Spec.ExternalName
	}
	if len(svc.Spec.ExternalIPs) > 0 {
		out.externalIPs = slices.Clone(svc.Spec.ExternalIPs)
	}
	out.lb = lbAddresses(svc.Status.LoadBalancer.Ingress, func(lb *corev1.LoadBalancerIngress) lbAddress {
		return lbAddress{lb.IP, lb.Hostname}
	})
	return out, nil
}

// knownProtocol returns the constant of a port protocol, so that the
// services do not each keep a copy of its name.
func knownProtocol(p corev1.Protocol) corev1.Protocol {
	for _, c := range []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP} {
		if p == c {
			return c
		}
	}
	return p
}

// DeepCopyObject implements runtime.Object.
func (in *service) DeepCopyObject() runtime.Object {
	out := *in
	out.objectMeta = in.objectMeta.deepCopy()
	out.externalIPs, out.ports, out.lb = slices.Clone(in.externalIPs), slices.Clone(in.ports), slices.Clone(in.lb)
	return &out
}

// serviceRecords returns the records a Service publishes.
//
// A LoadBalancer Service publishes <name>.<namespace>.<zone> for every zone and
// the names of its hostname annotations, pointing at spec.externalIPs and the
// load balancer addresses in its status (or at its target annotation); each
// named port adds an SRV record _<port>._<proto>.<name>.<namespace>.<zone>.
// An ExternalName Service publishes the same names as a CNAME to
// spec.externalName. Other Services publish nothing: cluster IPs never leave
// the cluster.
func serviceRecords(svc *service, c *sourceConfig) result {
	var r result
	if svc.ignored() {
		return r
	}
	var t targets
	switch svc.typ {
	case loadBalancerService:
		var ok bool
		if t, ok = annotationTargets(&r, svc); !ok {
			t = serviceAddresses(&r, svc)
		}
	case externalNameService:
		t.add(&r, svc.externalName, "spec.externalName")
		if len(t.ips) > 0 {
			// An ExternalName is a name, never an address (the API server accepts
			// "192.0.2.1" as one: it is a valid DNS subdomain).
			r.warnf("spec.externalName %q is an IP address, not a hostname: nothing published", svc.externalName)
			t.ips = nil
		}
	default:
		return r
	}
	if t.empty() {
		return r
	}
	ttl := objectTTL(&r, svc, c.ttl)
	own := serviceNames(&r, svc, c.zones)
	names := append(own, annotationHostnames(&r, svc, c.zones)...)
	r.publish(uniqueNames(names), t, ttl)
	if svc.typ == loadBalancerService {
		r.rrs = append(r.rrs, serviceSRV(&r, svc, own, t, c.zones, ttl)...)
	}
	return r
}

// serviceAddresses returns a LoadBalancer Service's external IPs and load balancer addresses.
func serviceAddresses(r *result, svc *service) targets {
	var t targets
	for _, ip := range svc.externalIPs {
		t.addIP(r, ip, "spec.externalIPs")
	}
	addLBAddresses(r, &t, svc.lb)
	return t
}

// serviceNames returns <name>.<namespace>.<zone> for every forward zone.
func serviceNames(r *result, svc *service, zones []string) []string {
	// The API server makes both DNS labels; checking them here keeps a dot or
	// an escape in either from moving the name into another zone.
	if checkLabel(strings.ToLower(svc.name)) != nil || checkLabel(strings.ToLower(svc.GetNamespace())) != nil {
		r.warnf("name %q or namespace %q is not a DNS label", svc.name, svc.GetNamespace())
		return nil
	}
	names := make([]string, 0, len(zones))
	for _, z := range zones {
		if isReverseZone(z) {
			continue
		}
		name := strings.ToLower(svc.name + "." + svc.GetNamespace() + "." + z)
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
func serviceSRV(r *result, svc *service, owners []string, t targets, zones []string, ttl uint32) []dns.RR {
	target := ""
	if len(t.ips) == 0 {
		if len(t.hosts) == 0 {
			return nil
		}
		target = t.hosts[0]
	}
	var rrs []dns.RR
	for _, p := range svc.ports {
		port := strings.ToLower(p.name)
		proto := strings.ToLower(string(p.protocol))
		if proto == "" {
			proto = "tcp"
		}
		if port == "" || checkLabel("_"+port) != nil || checkLabel("_"+proto) != nil || p.port < 1 || p.port > 65535 {
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
				Priority: 0, Weight: 100, Port: uint16(p.port), Target: srvTarget,
			})
		}
	}
	return rrs
}
