package source

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// DNSEndpointResource is external-dns's DNSEndpoint CRD.
var DNSEndpointResource = schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}

// dnsEndpoint is the part of a DNSEndpoint the plugin reads. The type is
// defined here rather than imported, to keep external-dns out of the build.
type dnsEndpoint struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Endpoints []endpoint `json:"endpoints"`
	} `json:"spec"`
}

// endpoint is one record set of a DNSEndpoint.
type endpoint struct {
	DNSName    string   `json:"dnsName"`
	Targets    []string `json:"targets"`
	RecordType string   `json:"recordType"`
	RecordTTL  int64    `json:"recordTTL,omitempty"`
}

// slimDNSEndpoint converts the unstructured object the dynamic informer
// delivers into a dnsEndpoint holding only what the plugin reads.
func slimDNSEndpoint(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	var e dnsEndpoint
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &e); err != nil {
		// Keep what identifies the object, so that its records are withdrawn
		// and the problem is logged with its name.
		e = dnsEndpoint{}
		e.Name, e.Namespace, e.Annotations = u.GetName(), u.GetNamespace(), map[string]string{invalidAnnotation: err.Error()}
		return &e, nil
	}
	e.ObjectMeta = slimMeta(e.ObjectMeta)
	return &e, nil
}

// invalidAnnotation marks an object that could not be read (internal only).
const invalidAnnotation = "k8s-gateway.dns/invalid"

// dnsEndpointRecords returns the records of every endpoint of a DNSEndpoint:
// each publishes its own name with its own type, targets and TTL.
func dnsEndpointRecords(e *dnsEndpoint, c *Config) Result {
	var r Result
	if msg, bad := e.Annotations[invalidAnnotation]; bad {
		r.warnf("cannot read the object: %s", msg)
		return r
	}
	meta := apiMeta{&e.ObjectMeta}
	if meta.ignored() {
		return r
	}
	// Counted before any is parsed: each target is a record.
	targets := 0
	for _, ep := range e.Spec.Endpoints {
		targets += len(ep.Targets)
	}
	if r.bound(targets) {
		return r
	}
	ttl := objectTTL(&r, meta, c.TTL)
	for i, ep := range e.Spec.Endpoints {
		origin := fmt.Sprintf("spec.endpoints[%d]", i)
		names := zoneNames(&r, ep.DNSName, c.Zones, false, origin+".dnsName")
		if len(names) == 0 {
			continue
		}
		t := ttl
		if ep.RecordTTL > 0 {
			t = uint32(min(ep.RecordTTL, 1<<31-1))
		}
		rrtype := strings.ToUpper(ep.RecordType)
		if rrtype == "" {
			rrtype = "A"
		}
		for _, target := range ep.Targets {
			recs, err := endpointRecord(names[0], rrtype, target, t)
			if err != nil {
				r.warnf("%s: %s target %q: %v", origin, rrtype, target, err)
				continue
			}
			for _, rr := range recs {
				if c.Addresses.keepsRecord(rr) {
					r.RRs = append(r.RRs, rr)
				}
			}
		}
	}
	return r
}

// maxRecordData bounds the data (RDATA) of one record of a DNSEndpoint, in
// octets. A longer record, a TXT target of 70 KB, say, fits in no DNS message:
// no one could be answered it, and every zone transfer of the zone, other
// tenants' names included, would fail on it. DNS providers cap a TXT value
// lower.
const maxRecordData = 4096

// endpointRecord parses one target of an endpoint into records.
func endpointRecord(name, rrtype, target string, ttl uint32) ([]dns.RR, error) {
	rrs, err := parseEndpointRecord(name, rrtype, target, ttl)
	for _, rr := range rrs {
		if n := dns.Len(rr) - dns.Len(&dns.ANY{Hdr: *rr.Header()}); n > maxRecordData {
			return nil, fmt.Errorf("record data of %d octets, more than %d", n, maxRecordData)
		}
	}
	return rrs, err
}

// parseEndpointRecord parses one target of an endpoint into records.
func parseEndpointRecord(name, rrtype, target string, ttl uint32) ([]dns.RR, error) {
	hdr := func(t uint16) dns.RR_Header {
		return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: ttl}
	}
	switch rrtype {
	case "A", "AAAA":
		ip, err := netip.ParseAddr(strings.TrimSpace(target))
		if err != nil {
			return nil, err
		}
		ip = ip.Unmap()
		if ip.Is4() != (rrtype == "A") || ip.Zone() != "" {
			return nil, fmt.Errorf("not an %s address", rrtype)
		}
		return []dns.RR{index.AddressRecord(hdr(0), ip)}, nil
	case "CNAME", "NS", "PTR":
		host, err := targetName(target)
		if err != nil {
			return nil, err
		}
		switch rrtype {
		case "CNAME":
			return []dns.RR{&dns.CNAME{Hdr: hdr(dns.TypeCNAME), Target: host}}, nil
		case "NS":
			return []dns.RR{&dns.NS{Hdr: hdr(dns.TypeNS), Ns: host}}, nil
		}
		return []dns.RR{&dns.PTR{Hdr: hdr(dns.TypePTR), Ptr: host}}, nil
	case "TXT":
		return []dns.RR{&dns.TXT{Hdr: hdr(dns.TypeTXT), Txt: splitTXT(target)}}, nil
	case "MX", "SRV", "CAA":
		rr, err := dns.NewRR(fmt.Sprintf("%s %d IN %s %s", name, ttl, rrtype, target))
		if err != nil {
			return nil, err
		}
		if rr == nil {
			return nil, fmt.Errorf("empty")
		}
		lowerTargets(rr)
		return []dns.RR{rr}, nil
	}
	return nil, fmt.Errorf("unsupported record type")
}

// splitTXT splits a TXT value into character-strings of at most 255 bytes
// (RFC 1035 §3.3), escaped as the dns package expects them.
func splitTXT(s string) []string {
	var out []string
	for len(s) > 255 {
		out = append(out, escapeTXT(s[:255]))
		s = s[255:]
	}
	return append(out, escapeTXT(s))
}

// escapeTXT escapes the bytes that the dns package would otherwise read as
// escapes (backslash, quote) or that are not printable.
func escapeTXT(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			fmt.Fprintf(&b, "\\%03d", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// lowerTargets lower-cases the domain names inside MX and SRV records.
func lowerTargets(rr dns.RR) {
	switch x := rr.(type) {
	case *dns.MX:
		x.Mx = strings.ToLower(x.Mx)
	case *dns.SRV:
		x.Target = strings.ToLower(x.Target)
	}
}
