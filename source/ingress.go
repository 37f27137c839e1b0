package source

import (
	"encoding/json"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// legacyIngressClassAnnotation is how Ingresses named their class before spec.ingressClassName.
const legacyIngressClassAnnotation = "kubernetes.io/ingress.class"

// Ingress is what the informers keep of an Ingress (see object.go): what
// ingressRecords reads.
type Ingress struct {
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
	// backends are its backend Services, with the host of their rule
	// ("" for a rule without host and the default backend; backends.go).
	backends []hostBackend
}

// Field numbers of the protobuf of an Ingress (k8s.io/api/networking/v1),
// of the fields an ingress is made of.
const (
	pbIngressMetadata, pbIngressSpec, pbIngressStatus = 1, 2, 3
	pbSpecTLS, pbSpecRules, pbSpecClassName           = 2, 3, 4
	pbTLSHosts, pbRuleHost                            = 1, 1
)

// Reset implements the protobuf decoder's interface.
func (in *Ingress) Reset() { *in = Ingress{} }

// Unmarshal reads an Ingress in protobuf into in (see protobuf.go).
func (in *Ingress) Unmarshal(b []byte) error {
	var legacyClass, className string
	var hasLegacy, hasClassName bool
	var rules, tls []string
	var backends []hostBackend
	err := pbFields(b, func(num protowire.Number, v []byte) error {
		var err error
		switch num {
		case pbIngressMetadata:
			legacyClass, hasLegacy, err = in.objectMeta.unmarshal(v, legacyIngressClassAnnotation)
		case pbIngressSpec:
			err = pbFields(v, func(num protowire.Number, v []byte) error {
				switch num {
				case pbSpecClassName:
					className, hasClassName = string(v), true
				case pbSpecDefaultBackend:
					name, err := unmarshalIngressBackend(v)
					if name != "" {
						backends = append(backends, hostBackend{"", name})
					}
					return err
				case pbSpecRules:
					var host string
					var names []string
					err := pbFields(v, func(num protowire.Number, v []byte) error {
						var err error
						switch num {
						case pbRuleHost:
							host = string(v)
							rules = append(rules, host)
						case pbRuleValue:
							names, err = unmarshalRuleBackends(v, names)
						}
						return err
					})
					for _, n := range names {
						backends = append(backends, hostBackend{host, n})
					}
					return err
				case pbSpecTLS:
					return pbFields(v, func(num protowire.Number, v []byte) error {
						if num == pbTLSHosts {
							tls = append(tls, string(v))
						}
						return nil
					})
				}
				return nil
			})
		case pbIngressStatus:
			in.lb, err = unmarshalLBStatus(v)
		}
		return err
	})
	in.class, in.hasClass = legacyClass, hasLegacy
	if hasClassName {
		in.class, in.hasClass = className, true
	}
	in.setHosts(rules, tls)
	in.setBackends(backends)
	return err
}

// ingressJSON is what an ingress is made of, in an Ingress's JSON.
type ingressJSON struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		IngressClassName *string            `json:"ingressClassName"`
		DefaultBackend   ingressBackendJSON `json:"defaultBackend"`
		Rules            []struct {
			Host string `json:"host"`
			HTTP struct {
				Paths []struct {
					Backend ingressBackendJSON `json:"backend"`
				} `json:"paths"`
			} `json:"http"`
		} `json:"rules"`
		TLS []struct {
			Hosts []string `json:"hosts"`
		} `json:"tls"`
	} `json:"spec"`
	Status struct {
		LoadBalancer lbStatusJSON `json:"loadBalancer"`
	} `json:"status"`
}

// UnmarshalJSON reads an Ingress in JSON into in, for API servers (or
// proxies) that answer with JSON.
func (in *Ingress) UnmarshalJSON(data []byte) error {
	var o ingressJSON
	if err := json.Unmarshal(data, &o); err != nil {
		return err
	}
	*in = Ingress{objectMeta: newObjectMeta(&o.Metadata), lb: o.Status.LoadBalancer.addresses()}
	if o.Spec.IngressClassName != nil {
		in.class, in.hasClass = *o.Spec.IngressClassName, true
	} else {
		in.class, in.hasClass = o.Metadata.Annotations[legacyIngressClassAnnotation]
	}
	var rules, tls []string
	var backends []hostBackend
	if b := o.Spec.DefaultBackend.Service; b != nil && b.Name != "" {
		backends = append(backends, hostBackend{"", b.Name})
	}
	for _, r := range o.Spec.Rules {
		rules = append(rules, r.Host)
		for _, p := range r.HTTP.Paths {
			if p.Backend.Service != nil && p.Backend.Service.Name != "" {
				backends = append(backends, hostBackend{r.Host, p.Backend.Service.Name})
			}
		}
	}
	for _, t := range o.Spec.TLS {
		tls = append(tls, t.Hosts...)
	}
	in.setHosts(rules, tls)
	in.setBackends(backends)
	return nil
}

// setHosts keeps the hosts of the rules, then those of the TLS entries,
// leaving out empty ones.
func (in *Ingress) setHosts(rules, tls []string) {
	in.hosts = nil
	if n := len(rules) + len(tls); n > 0 {
		in.hosts = make([]string, 0, n)
	}
	for _, h := range rules {
		if h != "" {
			in.hosts = append(in.hosts, h)
		}
	}
	in.tls = int32(len(in.hosts))
	for _, h := range tls {
		if h != "" {
			in.hosts = append(in.hosts, h)
		}
	}
	in.hosts = slices.Clip(in.hosts)
	if len(in.hosts) == 0 {
		in.hosts = nil
	}
}

// IngressList is a list of ingresses, as the informer lists them.
type IngressList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []Ingress `json:"items"`
}

// Unmarshal reads an IngressList in protobuf.
func (l *IngressList) Unmarshal(b []byte) error {
	return unmarshalList(b, &l.ListMeta, &l.Items)
}

// Reset implements the protobuf decoder's interface.
func (l *IngressList) Reset() { *l = IngressList{} }

// DeepCopyObject implements runtime.Object.
func (l *IngressList) DeepCopyObject() runtime.Object {
	out := &IngressList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Ingress, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Ingress)
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *Ingress) DeepCopyObject() runtime.Object {
	out := *in
	out.objectMeta = in.objectMeta.deepCopy()
	out.hosts, out.lb = slices.Clone(in.hosts), slices.Clone(in.lb)
	out.backends = slices.Clone(in.backends)
	return &out
}

// ingressRecords returns the records an Ingress publishes: its rule and TLS
// hosts (and hostname annotations) pointing at the load balancer addresses in
// its status, or at its target annotation. defaultClass is the cluster's
// default IngressClass, or "" (see ingressClassAllowed).
func ingressRecords(ing *Ingress, c *Config, defaultClass string) Result {
	var r Result
	if ing.ignored() || !ingressClassAllowed(ing, c.IngressClasses, defaultClass) {
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
		names = append(names, zoneNames(&r, h, c.Zones, false, origin)...)
	}
	names = append(names, annotationHostnames(&r, ing, c.Zones)...)
	c.publish(&r, uniqueNames(names), t, objectTTL(&r, ing, c.TTL))
	return r
}

// ingressClassAllowed reports whether the Ingress's class passes the filter.
// With no filter every Ingress passes; with one, an Ingress without a class
// (neither spec.ingressClassName nor the legacy annotation) has the cluster's
// default class, as its ingress controller sees it, and passes when that is
// listed; without a default class it does not pass.
func ingressClassAllowed(ing *Ingress, classes []string, defaultClass string) bool {
	if len(classes) == 0 {
		return true
	}
	class := ing.class
	if !ing.hasClass {
		class = defaultClass
	}
	return class != "" && slices.Contains(classes, class)
}
