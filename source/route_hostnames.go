package source

import (
	"strings"

	"github.com/miekg/dns"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A route's names are its hostnames narrowed by the hostname of each
// listener it attaches to, wildcard-aware as the Gateway API defines it.

// listenerHostname returns the hostname that narrows the names of the routes
// on a listener. The Gateway API ignores the hostname of TCP and UDP
// listeners, and so does the plugin.
func listenerHostname(l *gwv1.Listener) *gwv1.Hostname {
	if l.Protocol == gwv1.TCPProtocolType || l.Protocol == gwv1.UDPProtocolType {
		return nil
	}
	return l.Hostname
}

// narrowNames intersects fully qualified names (of hostname annotations) with
// a listener's hostname, wildcard-aware, as external-dns does.
func narrowNames(names []string, listener *gwv1.Hostname) []string {
	if listener == nil || *listener == "" {
		return names
	}
	var out []string
	for _, n := range names {
		if h, ok := intersectHostnames(strings.TrimSuffix(n, "."), listener); ok {
			out = append(out, h+".")
		}
	}
	return out
}

// listenerHostnames intersects a route's hostnames with a listener's hostname,
// wildcard-aware as the Gateway API defines it ("*.example.com" matches any
// name below example.com). A route without hostnames takes the listener's.
func listenerHostnames(listener *gwv1.Hostname, routeHosts []gwv1.Hostname) []string {
	if len(routeHosts) == 0 {
		if listener == nil || *listener == "" {
			return nil
		}
		return []string{string(*listener)}
	}
	var out []string
	for _, h := range routeHosts {
		if name, ok := intersectHostnames(string(h), listener); ok {
			out = append(out, name)
		}
	}
	return out
}

// intersectHostnames returns the more specific of a route's hostname and a
// listener's, when one covers the other; "*.example.com" covers any name
// below example.com. Without a listener hostname the route's stands.
func intersectHostnames(routeHost string, listener *gwv1.Hostname) (string, bool) {
	routeHost = strings.ToLower(routeHost)
	if listener == nil || *listener == "" {
		return routeHost, true
	}
	l := strings.ToLower(string(*listener))
	switch {
	case routeHost == l:
		return routeHost, true
	case hostMatches(l, routeHost):
		return routeHost, true // the route is narrower
	case hostMatches(routeHost, l):
		return l, true // the listener is narrower
	}
	return "", false
}

// hostMatches reports whether pattern (maybe "*.suffix") covers name, which
// may itself be a wildcard.
func hostMatches(pattern, name string) bool {
	suffix, ok := strings.CutPrefix(pattern, "*.")
	if !ok {
		return false
	}
	name = strings.TrimPrefix(name, "*.")
	return name != suffix && dns.IsSubDomain(suffix+".", name+".")
}
