package source

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var rtZones = []string{"example.com.", "2.0.192.in-addr.arpa."}

// rtEndpoint returns a DNSEndpoint default/name with one endpoint per triple
// dnsName, recordType, target.
func rtEndpoint(name string, eps ...string) *dnsEndpoint {
	e := &dnsEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	for i := 0; i+2 < len(eps); i += 3 {
		e.Spec.Endpoints = append(e.Spec.Endpoints, endpoint{DNSName: eps[i], RecordType: eps[i+1], Targets: []string{eps[i+2]}})
	}
	return e
}

// TestReverseZoneNames: absolute names in a reverse zone are inside the
// zones; relative names mean forward names only, and a Service's own name is
// published in the forward zones only.
func TestReverseZoneNames(t *testing.T) {
	for _, tc := range []struct {
		host     string
		relative bool
		want     []string
		warn     bool
	}{
		{host: "30.2.0.192.in-addr.arpa", want: []string{"30.2.0.192.in-addr.arpa."}},
		{host: "30.0/25.2.0.192.IN-ADDR.ARPA.", want: []string{"30.0/25.2.0.192.in-addr.arpa."}},
		{host: "www", relative: true, want: []string{"www.example.com."}},
		{host: "30.3.0.192.in-addr.arpa.", warn: true},
		{host: "0/25.example.com", warn: true}, // a slash only in reverse names
	} {
		var r Result
		got := zoneNames(&r, tc.host, rtZones, tc.relative, "test")
		if !slices.Equal(got, tc.want) || tc.warn != (len(r.Warnings) > 0) {
			t.Errorf("zoneNames(%q, %v) = %q, warnings %q; want %q", tc.host, tc.relative, got, r.Warnings, tc.want)
		}
	}
	var r Result
	svc := k8sSlimService(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"}})
	if got := serviceNames(&r, svc, rtZones); !slices.Equal(got, []string{"web.apps.example.com."}) {
		t.Errorf("serviceNames = %q, want the forward zone only", got)
	}
}
