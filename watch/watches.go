package watch

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// what names the informer in log lines: its kind, and its namespace if it
// reads only one.
func (w *watched) what() string {
	switch {
	case w.Namespace == "" || w.Nameserver:
		return w.Kind.Name
	case w.Kind.Cluster:
		return w.Kind.Name + " " + w.Namespace
	}
	return w.Kind.Name + " in namespace " + w.Namespace
}

// watches returns the informers the configuration asks for: with the
// namespaces option, one per listed namespace for each namespaced kind, and
// one per listed Namespace object, so that Roles in those namespaces are all
// the reading it needs (IngressClasses excepted).
func (c *Controller) watches() []*watched {
	var ws []*watched
	routes := false
	scopes := []string{""}
	if len(c.cfg.Namespaces) > 0 {
		scopes = slices.Compact(slices.Sorted(slices.Values(c.cfg.Namespaces)))
	}
	add := func(k *source.Kind, sel string) {
		in := scopes
		if k.Cluster && !k.ByName {
			in = []string{""}
		}
		for _, ns := range in {
			w := &watched{
				Kind:      k,
				Version:   k,
				Namespace: ns,
				Options:   func(o *metav1.ListOptions) { o.LabelSelector = sel },
				key: func(o metav1.Object) string {
					if key := source.KeyOf(o); key != "" && c.cfg.Prefix == "" {
						return key // one string for every view (source.WithKey)
					}
					return c.cfg.Prefix + k.Name + "/" + o.GetNamespace() + "/" + o.GetName()
				},
			}
			if k.Records != nil {
				w.records = func(obj any) source.Result { return k.Records(obj, &c.cfg.Sources, c.stores) }
			}
			ws = append(ws, w)
		}
	}
	for _, name := range c.cfg.Resources {
		k := source.KindByName(name)
		routes = routes || k.Route != nil
		if !c.api.Reads(k) {
			continue // no client for it (unit tests with a fake core client)
		}
		sel, ok := c.cfg.LabelSelectors[name]
		if !ok {
			sel = c.cfg.LabelSelector
		}
		add(k, sel)
	}
	if slices.Contains(c.cfg.Resources, "Ingress") && len(c.cfg.Sources.IngressClasses) > 0 && c.api.Reads(source.IngressClassKind) {
		// A class-less Ingress has the default IngressClass.
		add(source.IngressClassKind, "")
	}
	if c.readsEndpointSlices() {
		add(source.EndpointSliceKind, "")
	}
	namespaces := false
	if routes && c.api.Reads(source.GatewayKind) {
		// Routes publish through the kinds they depend on.
		for _, k := range routeContextKinds {
			add(k, "")
		}
		namespaces = true
	}
	if !namespaces && c.cfg.Ownership == index.Delegated && c.api.Reads(source.NamespaceKind) {
		// Namespaces carry their delegated domains.
		add(source.NamespaceKind, "")
	}
	// The nameserver's own Services publish the NS names and their glue.
	svc := source.KindByName("Service")
	nsSources := c.cfg.Sources
	if c.cfg.NameserverZones != nil {
		nsSources.Zones = c.cfg.NameserverZones
	}
	for _, nsName := range c.cfg.Nameservers {
		namespace, name, _ := strings.Cut(nsName, "/")
		ws = append(ws, &watched{
			Kind:      svc,
			Version:   svc,
			Namespace: namespace,
			Options:   func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name },
			key: func(o metav1.Object) string {
				return c.cfg.Prefix + "Nameserver/" + o.GetNamespace() + "/" + o.GetName()
			},
			records:    func(obj any) source.Result { return source.NameserverRecords(obj.(*source.Service), &nsSources) },
			Nameserver: true,
		})
	}
	return ws
}

// countKinds returns how many kinds ws read: with the namespaces option a
// kind has several informers.
func countKinds(ws []*watched) int {
	names := map[string]bool{}
	for _, w := range ws {
		names[w.Kind.Name] = true
	}
	return len(names)
}

// readsEndpointSlices reports whether the health option needs EndpointSlices:
// for the health of Services, and of the Ingresses and routes they back.
func (c *Controller) readsEndpointSlices() bool {
	return c.cfg.Health && c.api.Reads(source.EndpointSliceKind) && slices.ContainsFunc(c.cfg.Resources, func(r string) bool {
		return r == "Service" || r == "Ingress" || source.KindByName(r).Route != nil
	})
}
