package source

import (
	"slices"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestIntersectHostnames(t *testing.T) {
	listener := func(h string) *gwv1.Hostname { x := gwv1.Hostname(h); return &x }
	for _, c := range []struct {
		route    string
		listener *gwv1.Hostname
		want     string
		ok       bool
	}{
		{"web.example.com", nil, "web.example.com", true},
		{"Web.Example.com", listener(""), "web.example.com", true},
		{"web.example.com", listener("web.example.com"), "web.example.com", true},
		{"web.example.com", listener("*.example.com"), "web.example.com", true}, // the route is narrower
		{"*.example.com", listener("web.example.com"), "web.example.com", true}, // the listener is narrower
		{"*.a.example.com", listener("*.example.com"), "*.a.example.com", true}, // wildcards nest
		{"*.example.com", listener("*.a.example.com"), "*.a.example.com", true}, // either way
		{"*.example.com", listener("*.example.com"), "*.example.com", true},     // the same wildcard
		{"example.com", listener("*.example.com"), "", false},                   // a wildcard covers names below only
		{"web.example.org", listener("*.example.com"), "", false},
		{"web.example.com", listener("api.example.com"), "", false},
		{"badexample.com", listener("*.example.com"), "", false}, // labels, not characters
	} {
		got, ok := intersectHostnames(c.route, c.listener)
		if got != c.want || ok != c.ok {
			l := "<nil>"
			if c.listener != nil {
				l = string(*c.listener)
			}
			t.Errorf("intersectHostnames(%q, %q) = %q, %v; want %q, %v", c.route, l, got, ok, c.want, c.ok)
		}
	}
}

func TestListenerHostnames(t *testing.T) {
	wild := gwv1.Hostname("*.example.com")
	for _, c := range []struct {
		name     string
		listener *gwv1.Hostname
		route    []gwv1.Hostname
		want     []string
	}{
		{"no hostnames at all", nil, nil, nil},
		{"the listener's when the route has none", &wild, nil, []string{"*.example.com"}},
		{"the route's, narrowed", &wild, []gwv1.Hostname{"a.example.com", "b.example.org", "*.c.example.com"}, []string{"a.example.com", "*.c.example.com"}},
		{"the route's without a listener hostname", nil, []gwv1.Hostname{"A.example.org"}, []string{"a.example.org"}},
	} {
		if got := listenerHostnames(c.listener, c.route); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestNarrowNames(t *testing.T) {
	wild := gwv1.Hostname("*.example.com")
	names := []string{"a.example.com.", "b.example.org.", "*.c.example.com."}
	if got := narrowNames(names, nil); !slices.Equal(got, names) {
		t.Errorf("without a listener hostname: %q, want them all", got)
	}
	if got, want := narrowNames(names, &wild), []string{"a.example.com.", "*.c.example.com."}; !slices.Equal(got, want) {
		t.Errorf("under %s: %q, want %q", wild, got, want)
	}
}

func TestListenerHostname(t *testing.T) {
	h := gwv1.Hostname("web.example.com")
	for _, p := range []gwv1.ProtocolType{gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType, gwv1.TLSProtocolType} {
		if got := listenerHostname(&gwv1.Listener{Protocol: p, Hostname: &h}); got != &h {
			t.Errorf("%s listener: hostname %v, want %s", p, got, h)
		}
	}
	for _, p := range []gwv1.ProtocolType{gwv1.TCPProtocolType, gwv1.UDPProtocolType} {
		if got := listenerHostname(&gwv1.Listener{Protocol: p, Hostname: &h}); got != nil {
			t.Errorf("%s listener: hostname %s, want none (ignored for TCP and UDP)", p, *got)
		}
	}
}
