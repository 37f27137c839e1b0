package source

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// Labels and annotations read from objects.
const (
	IgnoreLabel = "k8s-gateway.dns/ignore"
	// coreDNSHostnameAnnotation is the original plugin's own hostname
	// annotation. external-dns does not read it, so its names are always
	// added to those of the external-dns hostname annotations.
	coreDNSHostnameAnnotation = "coredns.io/hostname"
	// resolveEndpointsAnnotation is the k8s-gateway fork's: "true" asks for
	// the ready pod addresses of a Service's EndpointSlices. The plugin never
	// publishes pod addresses, so a Service with it publishes nothing and says
	// why (serviceRecords).
	resolveEndpointsAnnotation = "k8s-gateway.dns/resolve-endpoints"
)

// The annotations of external-dns, under its two prefixes. For each key the
// GA prefix wins over the alpha one, as in external-dns, whose default prefix
// is now the GA one: the first valid value in these lists is used, and an
// invalid one is logged and does not hide a valid one under the other prefix.
var (
	// hostnameAnnotations add names to an object.
	hostnameAnnotations = []string{
		"external-dns.kubernetes.io/hostname",
		"external-dns.alpha.kubernetes.io/hostname",
	}
	// targetAnnotations replace the addresses an object reports in its status.
	targetAnnotations = []string{
		"external-dns.kubernetes.io/target",
		"external-dns.alpha.kubernetes.io/target",
	}
	// ttlAnnotations override the TTL of an object's records.
	ttlAnnotations = []string{
		"external-dns.kubernetes.io/ttl",
		"external-dns.alpha.kubernetes.io/ttl",
	}
)

// Config is what the source functions need to know about the plugin instance.
type Config struct {
	Zones          []string // fully qualified, lower case; reverse zones too
	TTL            uint32
	IngressClasses []string
	GatewayClasses []string
	// GatewaySelector is the labelSelector option, which Gateways are not
	// listed with (routes need them all) but which their own names obey.
	GatewaySelector labels.Selector
	// Addresses is the include and exclude options: the addresses kept.
	Addresses *AddressFilter
}

// publish adds to r the records that point every name at the addresses of t
// that the include and exclude options keep, or at its hostname.
func (c *Config) publish(r *Result, names []string, t targets, ttl uint32) {
	r.publish(names, c.Addresses.targets(t), ttl)
}

// Result collects what a source function makes of one object.
type Result struct {
	RRs      []dns.RR
	Warnings []string
	// Refused are the names the object may not publish for a reason found
	// before its records reach the index: a ListenerSet's namespace outside
	// the domains delegated at the name. They are reported as the index
	// reports the claims its policy rejects.
	Refused []string
	// dropped counts the warnings past maxWarnings.
	dropped int
}

// An object may be hostile: thousands of bad names, or one name of 200 KB in
// an annotation. Its warnings, one log line, are bounded: at most maxWarnings,
// each quoting at most maxWarningValue octets of a value, and a count of the
// others.
const (
	maxWarnings     = 8
	maxWarningValue = 256
)

// MaxObjectRecords bounds the records one object publishes. An object may
// be hostile: a DNSEndpoint of 100,000 endpoints would take every replica's
// memory, every snapshot and every zone transfer with it. One of more
// publishes nothing (never a part of it, which could answer half a name),
// with a warning naming it. It is the plugin's default tenant quota under
// the multi-tenant policies (tenant_quota), in which no larger object
// would fit.
const MaxObjectRecords = 10_000

// RecordsOf returns what obj, an object of kind k, publishes: k.Records,
// or nothing and a warning when it makes more than MaxObjectRecords.
func (k *Kind) RecordsOf(obj any, c *Config, ctx Context) Result {
	r := k.Records(obj, c, ctx)
	r.bound(len(r.RRs))
	return r
}

// bound empties r when an object makes n records, more than
// MaxObjectRecords, and says why first, whatever else is wrong with it.
func (r *Result) bound(n int) bool {
	if n <= MaxObjectRecords {
		return false
	}
	r.RRs = nil
	r.Warnings = slices.Insert(r.Warnings, 0, fmt.Sprintf("%d records, more than the %d an object may publish: it publishes nothing", n, MaxObjectRecords))
	return true
}

func (r *Result) warnf(format string, args ...any) {
	if len(r.Warnings) >= maxWarnings {
		r.dropped++
		r.Warnings = append(r.Warnings[:maxWarnings], fmt.Sprintf("and %d more", r.dropped))
		return
	}
	for i, a := range args {
		if v, ok := a.(string); ok && len(v) > maxWarningValue {
			args[i] = strings.ToValidUTF8(v[:maxWarningValue], "") + "…"
		}
	}
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// targets are the addresses an object points its names at.
type targets struct {
	ips   []netip.Addr
	hosts []string // fully qualified, lower case
}

func (t *targets) empty() bool { return len(t.ips) == 0 && len(t.hosts) == 0 }

// add parses an IP address or a hostname and adds it to the targets.
func (t *targets) add(r *Result, value, origin string) {
	value = strings.TrimSpace(value)
	if value == "" {
		return
	}
	if _, err := netip.ParseAddr(value); err == nil {
		t.addIP(r, value, origin)
		return
	}
	host, err := targetName(value)
	if err != nil {
		r.warnf("invalid address %q in %s: %v", value, origin, err)
		return
	}
	if !slices.Contains(t.hosts, host) {
		t.hosts = append(t.hosts, host)
	}
}

// addIP parses an IP address and adds it to the targets. It is for fields that
// hold only addresses (spec.externalIPs, status.loadBalancer.ingress[*].ip):
// anything else there is a mistake, never a hostname to point a CNAME at.
func (t *targets) addIP(r *Result, value, origin string) {
	value = strings.TrimSpace(value)
	if value == "" {
		return
	}
	ip, err := netip.ParseAddr(value)
	if err != nil || ip.Zone() != "" {
		r.warnf("invalid IP %q in %s", value, origin)
		return
	}
	ip = ip.Unmap()
	if !slices.Contains(t.ips, ip) {
		t.ips = append(t.ips, ip)
	}
}

// annotationTargets returns the target annotation's addresses, if the object
// has one with at least one valid target. As in external-dns, an empty target
// annotation, or one without a valid target, does not override the object's
// own addresses.
func annotationTargets(r *Result, meta sourceMeta) (targets, bool) {
	for _, key := range targetAnnotations {
		v, ok := meta.annotation(key)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		var t targets
		for _, s := range strings.Split(v, ",") {
			t.add(r, s, "annotation "+key)
		}
		if !t.empty() {
			return t, true
		}
		r.warnf("annotation %s has no valid target, ignored", key)
	}
	return targets{}, false
}

// objectTTL returns the TTL for an object's records: the ttl annotation, or def.
// As in external-dns, the annotation is seconds ("600") or a Go duration
// ("10m", "1h30m"; fractions of a second are dropped).
func objectTTL(r *Result, meta sourceMeta, def uint32) uint32 {
	for _, key := range ttlAnnotations {
		v, ok := meta.annotation(key)
		if !ok {
			continue
		}
		ttl, err := parseTTL(strings.TrimSpace(v))
		if err != nil {
			r.warnf("invalid TTL %q in annotation %s, ignored", v, key)
			continue
		}
		return ttl
	}
	return def
}

// parseTTL parses seconds or a duration into a TTL from 0 to 2^31-1 (RFC 2181 §8).
func parseTTL(s string) (uint32, error) {
	if ttl, err := strconv.ParseUint(s, 10, 31); err == nil {
		return uint32(ttl), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 || d.Seconds() > math.MaxInt32 {
		return 0, fmt.Errorf("TTL %s out of range", d)
	}
	return uint32(d / time.Second), nil
}

// annotationHostnames returns the names in the hostname annotations, each
// absolute or relative to every zone: those of coredns.io/hostname and those
// of the first external-dns hostname annotation that has a valid name.
func annotationHostnames(r *Result, meta sourceMeta, zones []string) []string {
	names := hostnamesOf(r, meta, coreDNSHostnameAnnotation, zones)
	for _, key := range hostnameAnnotations {
		if more := hostnamesOf(r, meta, key, zones); len(more) > 0 {
			return append(names, more...)
		}
	}
	return names
}

// hostnamesOf returns the names of one hostname annotation, a comma-separated list.
func hostnamesOf(r *Result, meta sourceMeta, key string, zones []string) []string {
	v, ok := meta.annotation(key)
	if !ok {
		return nil
	}
	var names []string
	for _, h := range strings.Split(v, ",") {
		if strings.TrimSpace(h) == "" {
			continue
		}
		names = append(names, zoneNames(r, h, zones, true, "annotation "+key)...)
	}
	return names
}

// publish adds to r the records that point every name at t.
// Addresses give A and AAAA records; without addresses, the first hostname
// gives a CNAME (a name can have only one).
func (r *Result) publish(names []string, t targets, ttl uint32) {
	if len(t.hosts) > 1 && len(t.ips) == 0 {
		r.warnf("several target hostnames %s: only %s is published as the CNAME", strings.Join(t.hosts, ","), t.hosts[0])
	}
	for _, name := range names {
		hdr := func(rrtype uint16) dns.RR_Header {
			return dns.RR_Header{Name: name, Rrtype: rrtype, Class: dns.ClassINET, Ttl: ttl}
		}
		if len(t.ips) > 0 {
			for _, ip := range t.ips {
				r.RRs = append(r.RRs, index.AddressRecord(hdr(0), ip))
			}
			continue
		}
		if len(t.hosts) > 0 {
			if t.hosts[0] == name {
				r.warnf("CNAME %s points at itself, skipped", name)
				continue
			}
			r.RRs = append(r.RRs, &dns.CNAME{Hdr: hdr(dns.TypeCNAME), Target: t.hosts[0]})
		}
	}
}

// The informers keep slimmed copies of the objects: only the fields the
// sources read. This keeps memory per object small in large clusters.

// sourceAnnotations are the annotations every source reads.
var sourceAnnotations = slices.Concat([]string{coreDNSHostnameAnnotation}, hostnameAnnotations, targetAnnotations, ttlAnnotations,
	[]string{WeightAnnotation, LocationAnnotation, resolveEndpointsAnnotation})

// readAnnotations are the annotations any source reads.
var readAnnotations = append(slices.Clip(sourceAnnotations), legacyIngressClassAnnotation)

func slimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		Name:            m.Name,
		Namespace:       m.Namespace,
		UID:             m.UID,
		ResourceVersion: m.ResourceVersion,
		Generation:      m.Generation,
		// The ownership policy orders claims by creation.
		CreationTimestamp: m.CreationTimestamp,
	}
	if v, ok := m.Labels[IgnoreLabel]; ok {
		out.Labels = map[string]string{IgnoreLabel: v}
	}
	for _, k := range readAnnotations {
		if v, ok := m.Annotations[k]; ok {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = v
		}
	}
	return out
}

// unite adds the addresses of o that t does not have yet.
func (t *targets) unite(o targets) {
	for _, ip := range o.ips {
		if !slices.Contains(t.ips, ip) {
			t.ips = append(t.ips, ip)
		}
	}
	for _, h := range o.hosts {
		if !slices.Contains(t.hosts, h) {
			t.hosts = append(t.hosts, h)
		}
	}
}

// key identifies the addresses of t, in their order.
func (t *targets) key() string {
	var b strings.Builder
	for _, ip := range t.ips {
		b.WriteString(ip.String())
		b.WriteByte(' ')
	}
	b.WriteByte('|')
	for _, h := range t.hosts {
		b.WriteString(h)
		b.WriteByte(' ')
	}
	return b.String()
}
