package source

import (
	"math"
	"strings"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// k8sFuzzConfig has a zone, a zone inside it, and a long zone, so that names
// relative to it come close to the 255 octet limit.
func k8sFuzzConfig(classes ...string) *Config {
	return &Config{
		Zones:          []string{"example.com.", "sub.example.com.", strings.Repeat("z", 60) + "." + strings.Repeat("y", 60) + ".example.org."},
		TTL:            60,
		IngressClasses: classes,
	}
}

// k8sCheckRecords checks what every record a source publishes must satisfy:
// a valid, lower-case, fully qualified owner inside a configured zone, and
// records that pack into a message.
func k8sCheckRecords(t *testing.T, cfg *Config, r Result) {
	t.Helper()
	buf := make([]byte, dns.MaxMsgSize)
	for _, rr := range r.RRs {
		h := rr.Header()
		name := h.Name
		if _, ok := dns.IsDomainName(name); !ok || !dns.IsFqdn(name) || name != strings.ToLower(name) {
			t.Fatalf("invalid owner %q in %s", name, rr)
		}
		if len(name) > 254 || strings.Contains(name, `\`) {
			t.Fatalf("owner %q too long or escaped", name)
		}
		for i, l := range dns.SplitDomainName(name) {
			if l == "*" && i == 0 {
				continue
			}
			if err := checkLabel(l); err != nil {
				t.Fatalf("owner %q: %v", name, err)
			}
		}
		if index.ZoneOf(cfg.Zones, name) < 0 {
			t.Fatalf("owner %q outside the zones %q", name, cfg.Zones)
		}
		if h.Class != dns.ClassINET || h.Ttl > math.MaxInt32 {
			t.Fatalf("bad class or TTL: %s", rr)
		}
		if _, err := dns.PackRR(rr, buf, 0, nil, false); err != nil {
			t.Fatalf("PackRR(%s): %v", rr, err)
		}
		if c, ok := rr.(*dns.CNAME); ok && c.Target == name {
			t.Fatalf("CNAME to itself: %s", rr)
		}
	}
	// A name can have a CNAME or other data, never both (RFC 1034 §3.6.2).
	cnames, data := map[string]bool{}, map[string]bool{}
	for _, rr := range r.RRs {
		if rr.Header().Rrtype == dns.TypeCNAME {
			cnames[rr.Header().Name] = true
		} else {
			data[rr.Header().Name] = true
		}
	}
	for n := range cnames {
		if data[n] {
			t.Fatalf("%s has a CNAME and other data", n)
		}
	}
}

func FuzzIngressRecords(f *testing.F) {
	for _, tc := range k8sIngressCases() {
		ing := tc.ing
		arg := func(s []string, i int) string {
			if i < len(s) {
				return s[i]
			}
			return ""
		}
		var hosts, tls []string
		for _, r := range ing.Spec.Rules {
			hosts = append(hosts, r.Host)
		}
		for _, t := range ing.Spec.TLS {
			tls = append(tls, t.Hosts...)
		}
		var ip, lbHost string
		if len(ing.Status.LoadBalancer.Ingress) > 0 {
			ip, lbHost = ing.Status.LoadBalancer.Ingress[0].IP, ing.Status.LoadBalancer.Ingress[0].Hostname
		}
		a := ing.Annotations
		f.Add(arg(hosts, 0), arg(tls, 0), a["external-dns.alpha.kubernetes.io/hostname"]+a["coredns.io/hostname"],
			a["external-dns.kubernetes.io/target"]+a["external-dns.alpha.kubernetes.io/target"],
			ip, lbHost, a["external-dns.kubernetes.io/ttl"]+a["external-dns.alpha.kubernetes.io/ttl"], a[legacyIngressClassAnnotation], true)
	}
	f.Add("WWW.Example.COM.", "*.sub.example.com", "a,b.,*.c,,", "", "::ffff:10.0.0.1", "lb.example.net", "0", "nginx", false)
	f.Add("*", "*.", `a\.b`, "www.example.com", "fe80::1%eth0", "www.example.com", "99999999999", "", true)
	f.Add(strings.Repeat("a.", 126)+"com", strings.Repeat("x", 64)+".example.com", strings.Repeat("r", 63)+"."+strings.Repeat("s", 63), "1.2.3.4,5.6.7.8,lb", "", "", "", "", true)

	f.Fuzz(func(t *testing.T, host, tlsHost, hostnameAnn, targetAnn, ip, lbHost, ttlAnn, class string, filter bool) {
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: "fuzz", Namespace: "default", Annotations: map[string]string{}},
			Spec: networkingv1.IngressSpec{
				Rules: []networkingv1.IngressRule{{Host: host}, {Host: tlsHost}},
				TLS:   []networkingv1.IngressTLS{{Hosts: []string{tlsHost, host, hostnameAnn}}},
			},
			Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
				Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: ip, Hostname: lbHost}, {Hostname: targetAnn}},
			}},
		}
		if hostnameAnn != "" {
			ing.Annotations["external-dns.alpha.kubernetes.io/hostname"] = hostnameAnn
			ing.Annotations["coredns.io/hostname"] = host + "," + tlsHost
		}
		if targetAnn != "" && filter {
			ing.Annotations["external-dns.kubernetes.io/target"] = targetAnn
		}
		if ttlAnn != "" {
			ing.Annotations["external-dns.kubernetes.io/ttl"] = ttlAnn
		}
		if class != "" {
			ing.Annotations[legacyIngressClassAnnotation] = class
			if !filter {
				ing.Spec.IngressClassName = &class
			}
		}
		var classes []string
		if filter {
			classes = []string{"nginx", class}
		}
		cfg := k8sFuzzConfig(classes...)
		r := ingressRecords(k8sSlimIngress(ing), cfg, "")
		k8sCheckRecords(t, cfg, r)

		// What the source does not read changes nothing.
		noisy := ing.DeepCopy()
		testutil.NoisyMeta(&noisy.ObjectMeta)
		if a, b := testutil.Strings(r.RRs), testutil.Strings(ingressRecords(k8sSlimIngress(noisy), cfg, "").RRs); testutil.Diff(a, b) != "" {
			t.Fatalf("unread fields change what the Ingress publishes: %s", testutil.Diff(b, a))
		}
	})
}

func FuzzServiceRecords(f *testing.F) {
	for _, tc := range k8sServiceCases() {
		svc := tc.svc
		var ip, lbHost, externalIP, portName, proto string
		var port int32
		if len(svc.Status.LoadBalancer.Ingress) > 0 {
			ip, lbHost = svc.Status.LoadBalancer.Ingress[0].IP, svc.Status.LoadBalancer.Ingress[0].Hostname
		}
		if len(svc.Spec.ExternalIPs) > 0 {
			externalIP = svc.Spec.ExternalIPs[0]
		}
		if len(svc.Spec.Ports) > 0 {
			portName, proto, port = svc.Spec.Ports[0].Name, string(svc.Spec.Ports[0].Protocol), svc.Spec.Ports[0].Port
		}
		a := svc.Annotations
		f.Add(svc.Name, svc.Namespace, string(svc.Spec.Type), svc.Spec.ExternalName,
			a["coredns.io/hostname"], a["external-dns.alpha.kubernetes.io/hostname"], a["external-dns.kubernetes.io/target"],
			externalIP, ip, lbHost, portName, proto, port)
	}
	f.Add("Web", "Apps", "LoadBalancer", "", "*.x, y., z.example.com.", "", "", "", "192.0.2.1", "", "HTTP", "tcp", int32(-1))
	f.Add("a.b", `c\`, "LoadBalancer", "", "", "", "", "", "192.0.2.1", "", "a.b", "t p", int32(70000))
	f.Add(strings.Repeat("n", 63), strings.Repeat("s", 63), "LoadBalancer", "", strings.Repeat("h", 63), "", "", "", "2001:db8::1", "", strings.Repeat("p", 63), "SCTP", int32(443))
	f.Add("web", "apps", "ExternalName", "web.apps.example.com", "web.apps.example.com", "", "", "", "", "", "", "", int32(0))

	f.Fuzz(func(t *testing.T, name, namespace, typ, externalName, hostnameAnn, hostnameAnn2, targetAnn, externalIP, ip, lbHost, portName, proto string, port int32) {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Annotations: map[string]string{}},
			Spec: corev1.ServiceSpec{
				Type:         corev1.ServiceType(typ),
				ExternalName: externalName,
				ExternalIPs:  []string{externalIP},
				ClusterIP:    "10.96.0.1",
				Ports: []corev1.ServicePort{
					{Name: portName, Protocol: corev1.Protocol(proto), Port: port},
					{Name: "http", Port: port},
				},
			},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{
				Ingress: []corev1.LoadBalancerIngress{{IP: ip, Hostname: lbHost}},
			}},
		}
		if hostnameAnn != "" {
			svc.Annotations["coredns.io/hostname"] = hostnameAnn
		}
		if hostnameAnn2 != "" {
			svc.Annotations["external-dns.kubernetes.io/hostname"] = hostnameAnn2
		}
		if targetAnn != "" {
			svc.Annotations["external-dns.alpha.kubernetes.io/target"] = targetAnn
		}
		cfg := k8sFuzzConfig()
		slim := k8sSlimService(svc)
		r := serviceRecords(slim, cfg)
		k8sCheckRecords(t, cfg, r)
		if svc.Spec.Type != corev1.ServiceTypeLoadBalancer && svc.Spec.Type != corev1.ServiceTypeExternalName && len(r.RRs) > 0 {
			t.Fatalf("a %q Service published %d records", typ, len(r.RRs))
		}
		for _, rr := range r.RRs {
			if a, ok := rr.(*dns.A); ok && a.A.String() == "10.96.0.1" {
				t.Fatalf("cluster IP published: %s", rr)
			}
			if srv, ok := rr.(*dns.SRV); ok && int32(srv.Port) != port {
				t.Fatalf("SRV port %d for port %d", srv.Port, port)
			}
		}

		// What the source does not read changes nothing.
		noisy := svc.DeepCopy()
		testutil.NoisyMeta(&noisy.ObjectMeta)
		if a, b := testutil.Strings(r.RRs), testutil.Strings(serviceRecords(k8sSlimService(noisy), cfg).RRs); testutil.Diff(a, b) != "" {
			t.Fatalf("unread fields change what the Service publishes: %s", testutil.Diff(b, a))
		}
		k8sCheckRecords(t, cfg, NameserverRecords(slim, cfg))
	})
}

// FuzzDNSEndpointRecords: whatever a DNSEndpoint holds (any type, target
// and TTL), each record it publishes is a valid record inside the zones
// whose data is at most maxRecordData octets, so that it fits in a reply and
// in a zone transfer; and nothing panics.
func FuzzDNSEndpointRecords(f *testing.F) {
	for _, s := range [][4]string{
		{"www.example.com", "A", "192.0.2.1", "60"},
		{"v6.sub.example.com.", "aaaa", "2001:db8::1", "0"},
		{"alias.example.com", "CNAME", "LB.example.net", "300"},
		{"txt.example.com", "TXT", "v=spf1 -all \"quoted\" \\ \x00\xff", "-1"},
		{"big.example.com", "TXT", strings.Repeat("t", 4081), "60"},
		{"mx.example.com", "MX", "10 Mail.example.com.", "60"},
		{"_sip._tcp.example.com", "SRV", "10 5 5060 sip.example.com.", "60"},
		{"caa.example.com", "CAA", `0 issue "ca.example.net"`, "60"},
		{"deleg.example.com", "NS", "ns1.example.net", "60"},
		{"1.2.0.192.in-addr.arpa", "PTR", "host.example.com", "60"},
		{"*.w.example.com", "A", "10.0.0.1", "99999999999"},
		{"x.example.com", "MX", "10 a\nb 60 IN A 192.0.2.1", "60"},
		{"x.example.com", "SRV", "0 0 80 .", "60"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, name, rrtype, target, ttl string) {
		ep := &dnsEndpoint{ObjectMeta: metav1.ObjectMeta{Name: "fuzz", Namespace: "default", Annotations: map[string]string{"external-dns.kubernetes.io/ttl": ttl}}}
		ep.Spec.Endpoints = []endpoint{
			{DNSName: name, RecordType: rrtype, Targets: []string{target, target + "x"}},
			{DNSName: "other." + name, RecordType: rrtype, Targets: strings.Split(target, ",")},
		}
		cfg := &Config{Zones: []string{"example.com.", "2.0.192.in-addr.arpa."}, TTL: 60}
		r := dnsEndpointRecords(ep, cfg)
		buf := make([]byte, dns.MaxMsgSize)
		for _, rr := range r.RRs {
			h := rr.Header()
			if _, ok := dns.IsDomainName(h.Name); !ok || index.ZoneOf(cfg.Zones, h.Name) < 0 || h.Name != strings.ToLower(h.Name) {
				t.Fatalf("owner %q of %s", h.Name, rr)
			}
			if h.Class != dns.ClassINET || h.Ttl > math.MaxInt32 {
				t.Fatalf("bad class or TTL: %s", rr)
			}
			if n := dns.Len(rr) - dns.Len(&dns.ANY{Hdr: *h}); n > maxRecordData {
				t.Fatalf("record data of %d octets: %.200s", n, rr)
			}
			if _, err := dns.PackRR(rr, buf, 0, nil, false); err != nil {
				t.Fatalf("PackRR(%.200s): %v", rr, err)
			}
		}
		if len(r.Warnings) > maxWarnings+1 {
			t.Fatalf("%d warnings", len(r.Warnings))
		}
	})
}
