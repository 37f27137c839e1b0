package source

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestRecordsOfBound: an object that makes more than MaxObjectRecords
// records publishes none of them, and says so first; one that makes as
// many publishes them all. A DNSEndpoint is counted before its targets are
// parsed.
func TestRecordsOfBound(t *testing.T) {
	cfg := &Config{Zones: []string{"example.com."}, TTL: 60, Addresses: &AddressFilter{}}
	endpoints := func(n int, bad bool) *dnsEndpoint {
		e := &dnsEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "big"}}
		for i := range n {
			target := fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255)
			if bad && i == 0 {
				target = "not-an-address!"
			}
			e.Spec.Endpoints = append(e.Spec.Endpoints, endpoint{DNSName: fmt.Sprintf("h%d.example.com", i), RecordType: "A", Targets: []string{target}})
		}
		return e
	}
	hosts := func(n int) *Service {
		var names []string
		for i := range n {
			names = append(names, fmt.Sprintf("h%d.example.com", i))
		}
		return k8sSlimService(testutil.AnnotateService(testutil.Service(corev1.ServiceTypeLoadBalancer, "192.0.2.1"), coreDNSHostnameAnnotation, strings.Join(names, ",")))
	}
	dnsEndpointKind, serviceKind := KindByName("DNSEndpoint"), KindByName("Service")
	tests := []struct {
		name    string
		kind    *Kind
		obj     any
		records int
		warning string // the first warning, "" for none
	}{
		{"a DNSEndpoint at the bound", dnsEndpointKind, endpoints(MaxObjectRecords, false), MaxObjectRecords, ""},
		{"a DNSEndpoint over it", dnsEndpointKind, endpoints(MaxObjectRecords+1, false), 0, "10001 records, more than the 10000 an object may publish: it publishes nothing"},
		// Counted before parsing: a bad target does not make it fit.
		{"a DNSEndpoint over it with a bad target", dnsEndpointKind, endpoints(MaxObjectRecords+1, true), 0, "10001 records, more than"},
		// The Service's own name and each hostname: one A record each.
		{"a Service at the bound", serviceKind, hosts(MaxObjectRecords - 1), MaxObjectRecords, ""},
		{"a Service over it", serviceKind, hosts(MaxObjectRecords), 0, "10001 records, more than the 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.kind.RecordsOf(tt.obj, cfg, nil)
			if len(r.RRs) != tt.records {
				t.Errorf("%d records, want %d", len(r.RRs), tt.records)
			}
			switch {
			case tt.warning == "" && len(r.Warnings) > 0:
				t.Errorf("warnings %q, want none", r.Warnings)
			case tt.warning != "" && (len(r.Warnings) == 0 || !strings.HasPrefix(r.Warnings[0], tt.warning)):
				t.Errorf("warnings %q, want first %q", r.Warnings, tt.warning)
			}
		})
	}
}
