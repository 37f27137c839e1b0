package source

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/miekg/dns"
	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// Service is what the informers keep of a Service (see object.go): what
// serviceRecords, serviceSRV and nameserverRecords read.
type Service struct {
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
	protocol string // TCP, UDP or SCTP
	port     int32
}

// Field numbers of the protobuf of a Service (k8s.io/api/core/v1), of the
// fields a service is made of.
const (
	pbServiceMetadata, pbServiceSpec, pbServiceStatus = 1, 2, 3
	pbSpecPorts, pbSpecType, pbSpecExternalIPs        = 1, 4, 5
	pbSpecExternalName                                = 10
	pbPortName, pbPortProtocol, pbPortNumber          = 1, 2, 3
)

// Reset implements the protobuf decoder's interface.
func (s *Service) Reset() { *s = Service{} }

// Unmarshal reads a Service in protobuf into s (see protobuf.go).
func (s *Service) Unmarshal(b []byte) error {
	var typ string
	var ports []servicePort
	err := pbFields(b, func(num protowire.Number, v []byte) error {
		switch num {
		case pbServiceMetadata:
			_, _, err := s.objectMeta.unmarshal(v, "")
			return err
		case pbServiceSpec:
			return pbFields(v, func(num protowire.Number, v []byte) error {
				switch num {
				case pbSpecPorts:
					p, err := unmarshalServicePort(v)
					ports = append(ports, p)
					return err
				case pbSpecType:
					typ = string(v)
				case pbSpecExternalIPs:
					s.externalIPs = append(s.externalIPs, string(v))
				case pbSpecExternalName:
					s.externalName = string(v)
				}
				return nil
			})
		case pbServiceStatus:
			var err error
			s.lb, err = unmarshalLBStatus(v)
			return err
		}
		return nil
	})
	s.setSpec(typ, ports)
	return err
}

func unmarshalServicePort(b []byte) (servicePort, error) {
	var p servicePort
	err := pbFields(b, func(num protowire.Number, v []byte) error {
		switch num {
		case pbPortName:
			p.name = string(v)
		case pbPortProtocol:
			p.protocol = knownProtocol(string(v))
		}
		return nil
	})
	if err != nil {
		return p, err
	}
	port, err := pbVarint(b, pbPortNumber)
	p.port = int32(port)
	return p, err
}

// serviceJSON is what a service is made of, in a Service's JSON.
type serviceJSON struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Type         string   `json:"type"`
		ExternalName string   `json:"externalName"`
		ExternalIPs  []string `json:"externalIPs"`
		Ports        []struct {
			Name     string `json:"name"`
			Protocol string `json:"protocol"`
			Port     int32  `json:"port"`
		} `json:"ports"`
	} `json:"spec"`
	Status struct {
		LoadBalancer lbStatusJSON `json:"loadBalancer"`
	} `json:"status"`
}

// UnmarshalJSON reads a Service in JSON into s, for API servers (or proxies)
// that answer with JSON.
func (s *Service) UnmarshalJSON(data []byte) error {
	var o serviceJSON
	if err := json.Unmarshal(data, &o); err != nil {
		return err
	}
	*s = Service{objectMeta: newObjectMeta(&o.Metadata), externalName: o.Spec.ExternalName, externalIPs: o.Spec.ExternalIPs, lb: o.Status.LoadBalancer.addresses()}
	var ports []servicePort
	for _, p := range o.Spec.Ports {
		ports = append(ports, servicePort{name: p.Name, protocol: knownProtocol(p.Protocol), port: p.Port})
	}
	s.setSpec(o.Spec.Type, ports)
	return nil
}

// setSpec sets the type of s and keeps what its type publishes: the named
// ports of a LoadBalancer Service, the externalName of an ExternalName one.
func (s *Service) setSpec(typ string, ports []servicePort) {
	s.typ = otherService
	switch typ {
	case "LoadBalancer":
		s.typ = loadBalancerService
	case "ExternalName":
		s.typ = externalNameService
	}
	if s.typ != externalNameService {
		s.externalName = ""
	}
	s.ports = nil
	if s.typ == loadBalancerService {
		for _, p := range ports {
			if p.name != "" {
				s.ports = append(s.ports, p)
			}
		}
		s.ports = slices.Clip(s.ports)
	}
	s.externalIPs = slices.Clip(s.externalIPs)
}

// knownProtocol returns the constant of a port protocol, so that the
// services do not each keep a copy of its name.
func knownProtocol(p string) string {
	for _, c := range []string{"TCP", "UDP", "SCTP"} {
		if p == c {
			return c
		}
	}
	return p
}

// ServiceList is a list of services, as the informer lists them.
type ServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []Service `json:"items"`
}

// Unmarshal reads a ServiceList in protobuf.
func (l *ServiceList) Unmarshal(b []byte) error {
	return unmarshalList(b, &l.ListMeta, &l.Items)
}

// Reset implements the protobuf decoder's interface.
func (l *ServiceList) Reset() { *l = ServiceList{} }

// DeepCopyObject implements runtime.Object.
func (l *ServiceList) DeepCopyObject() runtime.Object {
	out := &ServiceList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Service, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Service)
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *Service) DeepCopyObject() runtime.Object {
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
func serviceRecords(svc *Service, c *Config) Result {
	var r Result
	if svc.ignored() {
		return r
	}
	if v, _ := svc.annotation(resolveEndpointsAnnotation); v == "true" {
		r.warnf("annotation %s is not supported: the plugin never publishes pod addresses, so this Service publishes "+
			"nothing; remove the annotation to publish the addresses of its load balancer", resolveEndpointsAnnotation)
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
	// Filtered first, so that the SRV records follow the addresses kept.
	t = c.Addresses.targets(t)
	if t.empty() {
		return r
	}
	ttl := objectTTL(&r, svc, c.TTL)
	own := serviceNames(&r, svc, c.Zones)
	names := append(own, annotationHostnames(&r, svc, c.Zones)...)
	c.publish(&r, uniqueNames(names), t, ttl)
	if svc.typ == loadBalancerService {
		r.RRs = append(r.RRs, serviceSRV(&r, svc, own, t, c.Zones, ttl)...)
	}
	return r
}

// serviceAddresses returns a LoadBalancer Service's external IPs and load balancer addresses.
func serviceAddresses(r *Result, svc *Service) targets {
	var t targets
	for _, ip := range svc.externalIPs {
		t.addIP(r, ip, "spec.externalIPs")
	}
	addLBAddresses(r, &t, svc.lb)
	return t
}

// serviceNames returns <name>.<namespace>.<zone> for every forward zone.
func serviceNames(r *Result, svc *Service, zones []string) []string {
	// The API server makes both DNS labels; checking them here keeps a dot or
	// an escape in either from moving the name into another zone.
	if checkLabel(strings.ToLower(svc.name)) != nil || checkLabel(strings.ToLower(svc.GetNamespace())) != nil {
		r.warnf("name %q or namespace %q is not a DNS label", svc.name, svc.GetNamespace())
		return nil
	}
	names := make([]string, 0, len(zones))
	for _, z := range zones {
		if IsReverseZone(z) {
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
func serviceSRV(r *Result, svc *Service, owners []string, t targets, zones []string, ttl uint32) []dns.RR {
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

// NameserverRecords returns the records that a nameserver's own Service
// publishes: its external addresses at <name>.<namespace>.<zone> in every zone.
func NameserverRecords(svc *Service, c *Config) Result {
	var r Result
	t, ok := annotationTargets(&r, svc)
	if !ok {
		t = serviceAddresses(&r, svc)
	}
	if len(t.ips) == 0 && len(t.hosts) > 0 {
		r.warnf("the nameserver's Service has only hostnames (%s): a nameserver name needs addresses, no glue published", strings.Join(t.hosts, ", "))
	}
	t.hosts = nil // glue must be addresses (RFC 2181 §10.3: an NS target is no alias)
	c.publish(&r, serviceNames(&r, svc, c.Zones), t, c.TTL)
	return r
}
