//go:build e2e

package e2e

import (
	"cmp"
	"fmt"
	"strings"
)

// The Gateway API objects the tests create, written as YAML for
// `kubectl apply -f -`.

// manifest is an object that renders itself as one YAML document.
type manifest interface{ yaml() string }

// manifests joins objects into one multi-document YAML stream.
func manifests(objs ...manifest) string {
	docs := make([]string, len(objs))
	for i, o := range objs {
		docs[i] = o.yaml()
	}
	return strings.Join(docs, "---\n")
}

// passthrough is a TLS listener's extra field.
const passthrough = "tls: {mode: Passthrough}"

// listener is one of spec.listeners of a Gateway or a ListenerSet; extra
// holds further fields in YAML flow style, e.g. passthrough or
// "allowedRoutes: {namespaces: {from: All}}".
type listener struct {
	name, protocol string
	port           int
	hostname       string // none when empty
	extra          string
}

func listenersYAML(ls []listener) string {
	var b strings.Builder
	b.WriteString("  listeners:\n")
	for _, l := range ls {
		fmt.Fprintf(&b, "  - {name: %s, protocol: %s, port: %d", l.name, l.protocol, l.port)
		if l.hostname != "" {
			fmt.Fprintf(&b, ", hostname: %q", l.hostname)
		}
		if l.extra != "" {
			b.WriteString(", " + l.extra)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// gateway is a Gateway of the GatewayClass class; allowedListeners, when
// not empty, is its spec.allowedListeners in flow style.
type gateway struct {
	namespace, name, class string
	allowedListeners       string
	listeners              []listener
}

func (g gateway) yaml() string {
	s := fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %s, namespace: %s}\nspec:\n  gatewayClassName: %s\n",
		g.name, g.namespace, g.class)
	if g.allowedListeners != "" {
		s += "  allowedListeners: " + g.allowedListeners + "\n"
	}
	return s + listenersYAML(g.listeners)
}

// listenerSet is a ListenerSet on the Gateway parent (in parentNamespace
// when not empty), or with experimental an XListenerSet of
// gateway.networking.x-k8s.io/v1alpha1.
type listenerSet struct {
	namespace, name         string
	parent, parentNamespace string
	experimental            bool
	listeners               []listener
}

func (l listenerSet) yaml() string {
	apiVersion, kind := "gateway.networking.k8s.io/v1", "ListenerSet"
	if l.experimental {
		apiVersion, kind = "gateway.networking.x-k8s.io/v1alpha1", "XListenerSet"
	}
	parent := "name: " + l.parent
	if l.parentNamespace != "" {
		parent += ", namespace: " + l.parentNamespace
	}
	return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: %s, namespace: %s}\nspec:\n  parentRef: {%s}\n",
		apiVersion, kind, l.name, l.namespace, parent) + listenersYAML(l.listeners)
}

// route is a route of kind (HTTPRoute, GRPCRoute, TLSRoute, TCPRoute,
// UDPRoute) at version (v1 when empty), attached to parent (its accepted
// is not used), with hostnames, the coredns.io/hostname annotation when not
// empty, and one rule sending to port of the Service backend.
type route struct {
	kind, version   string
	namespace, name string
	annotation      string
	parent          gwapiParent
	hostnames       []string
	backend         string
	port            int
}

func (r route) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: gateway.networking.k8s.io/%s\nkind: %s\n", cmp.Or(r.version, "v1"), r.kind)
	fmt.Fprintf(&b, "metadata: {name: %s, namespace: %s", r.name, r.namespace)
	if r.annotation != "" {
		fmt.Fprintf(&b, ", annotations: {coredns.io/hostname: %q}", r.annotation)
	}
	b.WriteString("}\nspec:\n  parentRefs: [{")
	if r.parent.kind != "" {
		kind, group := r.parent.kindGroup()
		fmt.Fprintf(&b, "group: %s, kind: %s, ", group, kind)
	}
	b.WriteString("name: " + r.parent.gateway)
	if r.parent.namespace != "" {
		b.WriteString(", namespace: " + r.parent.namespace)
	}
	if r.parent.section != "" {
		b.WriteString(", sectionName: " + r.parent.section)
	}
	b.WriteString("}]\n")
	if len(r.hostnames) > 0 {
		fmt.Fprintf(&b, "  hostnames: [%q", r.hostnames[0])
		for _, h := range r.hostnames[1:] {
			fmt.Fprintf(&b, ", %q", h)
		}
		b.WriteString("]\n")
	}
	fmt.Fprintf(&b, "  rules: [{backendRefs: [{name: %s, port: %d}]}]\n", r.backend, r.port)
	return b.String()
}
