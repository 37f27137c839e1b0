package source

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// k8sSlimService converts a Service as its informer does.
func k8sSlimService(svc *corev1.Service) *Service {
	out, _ := slimService(svc)
	return out.(*Service)
}

// k8sServiceCase is one Service and what serviceRecords makes of it.
type k8sServiceCase struct {
	name string
	cfg  *Config // oneZone() when nil
	svc  *corev1.Service
	want []string
	warn []string // substrings of expected warnings; none allowed when empty
}

// k8sServiceCases are the Service source cases, also run through the slim
// transform (kubernetes_test.go) and used as fuzz seeds.
func k8sServiceCases() []k8sServiceCase {
	oneZone := func() *Config { return &Config{Zones: []string{"example.com."}, TTL: 60} }
	lb := corev1.ServiceTypeLoadBalancer

	cases := []k8sServiceCase{
		{
			name: "LoadBalancer with an IPv4 and an IPv6",
			svc:  testutil.Service(lb, "192.0.2.10", "2001:db8::10"),
			want: []string{
				"web.apps.example.com. 60 IN A 192.0.2.10",
				"web.apps.example.com. 60 IN AAAA 2001:db8::10",
			},
		},
		{
			name: "name under every zone",
			cfg:  k8sTestConfig(),
			svc:  testutil.Service(lb, "192.0.2.10"),
			want: []string{
				"web.apps.example.com. 60 IN A 192.0.2.10",
				"web.apps.sub.example.com. 60 IN A 192.0.2.10",
				"web.apps.example.org. 60 IN A 192.0.2.10",
			},
		},
		{
			name: "ClusterIP publishes nothing, not even external IPs",
			svc: func() *corev1.Service {
				svc := testutil.Service(corev1.ServiceTypeClusterIP)
				svc.Spec.ExternalIPs = []string{"198.51.100.1"}
				return svc
			}(),
		},
		{
			name: "Service without a type (ClusterIP) publishes nothing",
			svc:  testutil.Service(""),
		},
		{
			name: "NodePort publishes nothing",
			svc:  testutil.Service(corev1.ServiceTypeNodePort, "192.0.2.10"),
		},
		{
			name: "LoadBalancer without status publishes nothing",
			svc:  testutil.Service(lb),
		},
		{
			name: "LoadBalancer: the cluster IP is never published",
			svc:  testutil.AnnotateService(testutil.Service(lb), "coredns.io/hostname", "web.example.com"),
		},
		{
			name: "external IPs and load balancer addresses together",
			svc: func() *corev1.Service {
				svc := testutil.Service(lb, "192.0.2.10", "192.0.2.11")
				svc.Spec.ExternalIPs = []string{"198.51.100.1", "192.0.2.10"}
				return svc
			}(),
			want: []string{
				"web.apps.example.com. 60 IN A 192.0.2.10",
				"web.apps.example.com. 60 IN A 192.0.2.11",
				"web.apps.example.com. 60 IN A 198.51.100.1",
			},
		},
		{
			name: "invalid external IP warns, the rest publishes",
			svc: func() *corev1.Service {
				svc := testutil.Service(lb, "192.0.2.10")
				svc.Spec.ExternalIPs = []string{"300.1.1.1", "not-an-ip"}
				return svc
			}(),
			want: []string{"web.apps.example.com. 60 IN A 192.0.2.10"},
			warn: []string{`invalid IP "300.1.1.1"`, `invalid IP "not-an-ip"`},
		},
		{
			name: "invalid external IP alone publishes nothing",
			svc: func() *corev1.Service {
				svc := testutil.Service(lb)
				svc.Spec.ExternalIPs = []string{"lb.example.net"}
				return svc
			}(),
			warn: []string{`invalid IP "lb.example.net"`},
		},
		{
			name: "load balancer hostname gives a CNAME",
			svc:  testutil.Service(lb, "abc.elb.amazonaws.com"),
			want: []string{"web.apps.example.com. 60 IN CNAME abc.elb.amazonaws.com."},
		},
		{
			name: "hostname annotations: lists, spaces, wildcards, relative and absolute names",
			cfg:  &Config{Zones: []string{"example.com.", "example.org."}, TTL: 60},
			svc: testutil.AnnotateService(testutil.Service(lb, "192.0.2.10"),
				"coredns.io/hostname", " a.example.com , rel ,,",
				"external-dns.alpha.kubernetes.io/hostname", "*.wild.example.com,abs.example.org."),
			want: []string{
				"web.apps.example.com. 60 IN A 192.0.2.10",
				"web.apps.example.org. 60 IN A 192.0.2.10",
				"a.example.com. 60 IN A 192.0.2.10",
				"rel.example.com. 60 IN A 192.0.2.10",
				"rel.example.org. 60 IN A 192.0.2.10",
				"*.wild.example.com. 60 IN A 192.0.2.10",
				"abs.example.org. 60 IN A 192.0.2.10",
			},
		},
		{
			name: "hostname annotations: the GA prefix wins over the alpha one, coredns.io/hostname adds",
			cfg:  &Config{Zones: []string{"example.com.", "example.org."}, TTL: 60},
			svc: testutil.AnnotateService(testutil.Service(lb, "192.0.2.10"),
				"coredns.io/hostname", "a.example.com",
				"external-dns.alpha.kubernetes.io/hostname", "*.wild.example.com,abs.example.org.",
				"external-dns.kubernetes.io/hostname", "*.rel2"),
			want: []string{
				"web.apps.example.com. 60 IN A 192.0.2.10",
				"web.apps.example.org. 60 IN A 192.0.2.10",
				"a.example.com. 60 IN A 192.0.2.10",
				"*.rel2.example.com. 60 IN A 192.0.2.10",
				"*.rel2.example.org. 60 IN A 192.0.2.10",
			},
		},
		{
			name: "absolute hostname outside every zone warns",
			svc: testutil.AnnotateService(testutil.Service(lb, "192.0.2.10"),
				"coredns.io/hostname", "www.example.net., ok"),
			want: []string{
				"web.apps.example.com. 60 IN A 192.0.2.10",
				"ok.example.com. 60 IN A 192.0.2.10",
			},
			warn: []string{`"www.example.net."`, "outside the zones"},
		},
		{
			name: "relative hostname that would be too long warns",
			svc: testutil.AnnotateService(testutil.Service(lb, "192.0.2.10"),
				"coredns.io/hostname", k8sLongName(250)),
			want: []string{"web.apps.example.com. 60 IN A 192.0.2.10"},
			warn: []string{"too long under example.com."},
		},
		{
			name: "invalid hostname annotation warns",
			svc: testutil.AnnotateService(testutil.Service(lb, "192.0.2.10"),
				"coredns.io/hostname", "bad name.example.com,a..b"),
			want: []string{"web.apps.example.com. 60 IN A 192.0.2.10"},
			warn: []string{`"bad name.example.com"`, `"a..b"`},
		},
		{
			name: "hostname annotations repeating the service name",
			svc: testutil.AnnotateService(testutil.Service(lb, "192.0.2.10"),
				"coredns.io/hostname", "web.apps.example.com, web.apps"),
			want: []string{"web.apps.example.com. 60 IN A 192.0.2.10"},
		},
		{
			name: "target annotation overrides the addresses",
			svc: testutil.AnnotateService(func() *corev1.Service {
				svc := testutil.Service(lb, "192.0.2.10")
				svc.Spec.ExternalIPs = []string{"198.51.100.1"}
				return svc
			}(), "external-dns.alpha.kubernetes.io/target", "203.0.113.5"),
			want: []string{"web.apps.example.com. 60 IN A 203.0.113.5"},
		},
		{
			name: "invalid target annotation: the addresses stay",
			svc:  testutil.AnnotateService(testutil.Service(lb, "192.0.2.10"), "external-dns.alpha.kubernetes.io/target", "-bad-"),
			want: []string{"web.apps.example.com. 60 IN A 192.0.2.10"},
			warn: []string{`"-bad-"`, "no valid target"},
		},
		{
			name: "IP-shaped target annotation that is no IP: the addresses stay",
			svc:  testutil.AnnotateService(testutil.Service(lb, "192.0.2.10"), "external-dns.kubernetes.io/target", "999.1.1.1"),
			want: []string{"web.apps.example.com. 60 IN A 192.0.2.10"},
			warn: []string{`"999.1.1.1"`, "all digits", "no valid target"},
		},
		{
			name: "target annotation with a name",
			svc:  testutil.AnnotateService(testutil.Service(lb, "192.0.2.10"), "external-dns.kubernetes.io/target", "edge.example.net"),
			want: []string{"web.apps.example.com. 60 IN CNAME edge.example.net."},
		},
		{
			name: "ttl annotation",
			svc:  testutil.AnnotateService(testutil.Service(lb, "192.0.2.10"), "external-dns.kubernetes.io/ttl", "10"),
			want: []string{"web.apps.example.com. 10 IN A 192.0.2.10"},
		},
		{
			name: "ExternalName gives a CNAME for its name and hostname annotations",
			svc: testutil.AnnotateService(func() *corev1.Service {
				svc := testutil.Service(corev1.ServiceTypeExternalName)
				svc.Spec.ExternalName = "DB.Example.NET"
				svc.Spec.ClusterIP = ""
				svc.Spec.Ports = []corev1.ServicePort{{Name: "pg", Protocol: corev1.ProtocolTCP, Port: 5432}}
				return svc
			}(), "coredns.io/hostname", "db"),
			want: []string{
				"web.apps.example.com. 60 IN CNAME db.example.net.",
				"db.example.com. 60 IN CNAME db.example.net.",
			},
		},
		{
			name: "ExternalName ignores the status and the target annotation",
			svc: testutil.AnnotateService(func() *corev1.Service {
				svc := testutil.Service(corev1.ServiceTypeExternalName, "192.0.2.10")
				svc.Spec.ExternalName = "db.example.net."
				return svc
			}(), "external-dns.kubernetes.io/target", "198.51.100.1"),
			want: []string{"web.apps.example.com. 60 IN CNAME db.example.net."},
		},
		{
			name: "ExternalName pointing at itself is skipped",
			svc: func() *corev1.Service {
				svc := testutil.Service(corev1.ServiceTypeExternalName)
				svc.Spec.ExternalName = "web.apps.example.com"
				return svc
			}(),
			warn: []string{"points at itself"},
		},
		{
			name: "ExternalName that is an IP address publishes nothing, with a warning",
			svc: func() *corev1.Service {
				svc := testutil.Service(corev1.ServiceTypeExternalName)
				svc.Spec.ExternalName = "192.0.2.99"
				return svc
			}(),
			warn: []string{`"192.0.2.99"`},
		},
		{
			name: "SRV records for named ports only",
			cfg:  &Config{Zones: []string{"example.com.", "example.org."}, TTL: 60},
			svc: testutil.AnnotateService(testutil.WithPorts(testutil.Service(lb, "192.0.2.10"),
				corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80},
				corev1.ServicePort{Name: "DNS", Protocol: corev1.ProtocolUDP, Port: 53},
				corev1.ServicePort{Name: "sig", Protocol: corev1.ProtocolSCTP, Port: 3868},
				corev1.ServicePort{Name: "noproto", Port: 8443},
				corev1.ServicePort{Port: 8080}, // unnamed: no SRV
			), "coredns.io/hostname", "alias.example.com"), // annotation names get no SRV
			want: []string{
				"web.apps.example.com. 60 IN A 192.0.2.10",
				"web.apps.example.org. 60 IN A 192.0.2.10",
				"alias.example.com. 60 IN A 192.0.2.10",
				"_http._tcp.web.apps.example.com. 60 IN SRV 0 100 80 web.apps.example.com.",
				"_http._tcp.web.apps.example.org. 60 IN SRV 0 100 80 web.apps.example.org.",
				"_dns._udp.web.apps.example.com. 60 IN SRV 0 100 53 web.apps.example.com.",
				"_dns._udp.web.apps.example.org. 60 IN SRV 0 100 53 web.apps.example.org.",
				"_sig._sctp.web.apps.example.com. 60 IN SRV 0 100 3868 web.apps.example.com.",
				"_sig._sctp.web.apps.example.org. 60 IN SRV 0 100 3868 web.apps.example.org.",
				"_noproto._tcp.web.apps.example.com. 60 IN SRV 0 100 8443 web.apps.example.com.",
				"_noproto._tcp.web.apps.example.org. 60 IN SRV 0 100 8443 web.apps.example.org.",
			},
		},
		{
			name: "no SRV records for ports out of range",
			svc: testutil.WithPorts(testutil.Service(lb, "192.0.2.10"),
				corev1.ServicePort{Name: "zero", Protocol: corev1.ProtocolTCP, Port: 0},
				corev1.ServicePort{Name: "big", Protocol: corev1.ProtocolTCP, Port: 70000}),
			want: []string{"web.apps.example.com. 60 IN A 192.0.2.10"},
		},
		{
			name: "SRV records take the ttl annotation",
			svc: testutil.AnnotateService(testutil.WithPorts(testutil.Service(lb, "192.0.2.10"),
				corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}),
				"external-dns.alpha.kubernetes.io/ttl", "30"),
			want: []string{
				"web.apps.example.com. 30 IN A 192.0.2.10",
				"_http._tcp.web.apps.example.com. 30 IN SRV 0 100 80 web.apps.example.com.",
			},
		},
		{
			name: "SRV records of a load balancer with only a hostname point at the hostname, never at the CNAME",
			svc: testutil.WithPorts(testutil.Service(lb, "lb-1.elb.example.net"),
				corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}),
			want: []string{
				"web.apps.example.com. 60 IN CNAME lb-1.elb.example.net.",
				"_http._tcp.web.apps.example.com. 60 IN SRV 0 100 80 lb-1.elb.example.net.",
			},
		},
		{
			name: "SRV records with a target annotation that is a name point at that name",
			svc: testutil.AnnotateService(testutil.WithPorts(testutil.Service(lb, "192.0.2.10"),
				corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}),
				"external-dns.kubernetes.io/target", "edge.example.net"),
			want: []string{
				"web.apps.example.com. 60 IN CNAME edge.example.net.",
				"_http._tcp.web.apps.example.com. 60 IN SRV 0 100 80 edge.example.net.",
			},
		},
		{
			name: "no SRV records when the hostname is inside the zones, where it may be a CNAME",
			svc: testutil.WithPorts(testutil.Service(lb, "lb.example.com"),
				corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}),
			want: []string{"web.apps.example.com. 60 IN CNAME lb.example.com."},
			warn: []string{"no SRV records"},
		},
		{
			name: "SRV records with addresses and a hostname point at the owner, which has the addresses",
			svc: testutil.WithPorts(testutil.Service(lb, "192.0.2.10", "lb-1.elb.example.net"),
				corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}),
			want: []string{
				"web.apps.example.com. 60 IN A 192.0.2.10",
				"_http._tcp.web.apps.example.com. 60 IN SRV 0 100 80 web.apps.example.com.",
			},
		},
		{
			name: "no SRV records without addresses",
			svc: testutil.WithPorts(testutil.Service(lb),
				corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}),
		},
		{
			name: "ignore label",
			svc: func() *corev1.Service {
				svc := testutil.Service(lb, "192.0.2.10")
				svc.Labels = map[string]string{"k8s-gateway.dns/ignore": "true"}
				return svc
			}(),
		},
		{
			name: "ignore label on an ExternalName Service",
			svc: func() *corev1.Service {
				svc := testutil.Service(corev1.ServiceTypeExternalName)
				svc.Spec.ExternalName = "db.example.net"
				svc.Labels = map[string]string{"k8s-gateway.dns/ignore": "TRUE"}
				return svc
			}(),
		},
		{
			name: "the fork's resolve-endpoints annotation: nothing published, and why",
			svc:  testutil.AnnotateService(testutil.Service(lb, "192.0.2.10"), resolveEndpointsAnnotation, "true"),
			warn: []string{resolveEndpointsAnnotation, "never publishes pod addresses"},
		},
		{
			name: "resolve-endpoints on a headless Service: the same warning",
			svc: func() *corev1.Service {
				svc := testutil.AnnotateService(testutil.Service(corev1.ServiceTypeClusterIP), resolveEndpointsAnnotation, "true")
				svc.Spec.ClusterIP = corev1.ClusterIPNone
				return svc
			}(),
			warn: []string{resolveEndpointsAnnotation},
		},
		{
			name: "resolve-endpoints other than true is not the fork's opt-in",
			svc:  testutil.AnnotateService(testutil.Service(lb, "192.0.2.10"), resolveEndpointsAnnotation, "yes"),
			want: []string{"web.apps.example.com. 60 IN A 192.0.2.10"},
		},
		{
			name: "a name that is not a DNS label publishes nothing under the zones",
			svc: func() *corev1.Service {
				svc := testutil.Service(lb, "192.0.2.10")
				svc.Name = "web.other" // the API server never allows this
				return svc
			}(),
			warn: []string{`"web.other"`},
		},
		{
			name: "SRV records that would be longer than a name can be are skipped",
			cfg:  &Config{Zones: []string{k8sLongName(230) + "."}, TTL: 60},
			svc: testutil.WithPorts(testutil.Service(lb, "192.0.2.10"),
				corev1.ServicePort{Name: "https-metrics", Protocol: corev1.ProtocolTCP, Port: 443}),
			want: []string{"web.apps." + k8sLongName(230) + ". 60 IN A 192.0.2.10"},
		},
	}
	for i := range cases {
		if cases[i].cfg == nil {
			cases[i].cfg = oneZone()
		}
	}
	return cases
}

func TestServiceRecords(t *testing.T) {
	for _, tc := range k8sServiceCases() {
		t.Run(tc.name, func(t *testing.T) {
			r := serviceRecords(k8sSlimService(tc.svc), tc.cfg)
			if d := testutil.Diff(testutil.Strings(r.RRs), testutil.Want(t, tc.want...)); d != "" {
				t.Error(d)
			}
			testutil.CheckWarnings(t, r.Warnings, tc.warn)
		})
	}
}

// k8sLongName returns a relative name of n characters made of valid labels.
func k8sLongName(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a'
		if i%50 == 49 && i != n-1 {
			b[i] = '.'
		}
	}
	return string(b)
}

func TestNameserverRecords(t *testing.T) {
	cfg := &Config{Zones: []string{"example.com.", "example.org."}, TTL: 60}
	tests := []struct {
		name string
		svc  *corev1.Service
		want []string
		warn []string
	}{
		{
			name: "load balancer addresses in every zone",
			svc:  testutil.NamedService("kube-system", "dns1", "192.0.2.53", "2001:db8::53"),
			want: []string{
				"dns1.kube-system.example.com. 60 IN A 192.0.2.53", "dns1.kube-system.example.com. 60 IN AAAA 2001:db8::53",
				"dns1.kube-system.example.org. 60 IN A 192.0.2.53", "dns1.kube-system.example.org. 60 IN AAAA 2001:db8::53",
			},
		},
		{
			name: "hostname only: no glue, a warning",
			svc:  testutil.NamedService("kube-system", "dns1", "lb.example.net"),
			warn: []string{"only hostnames", "lb.example.net."},
		},
		{
			name: "hostnames are dropped next to addresses",
			svc:  testutil.NamedService("kube-system", "dns1", "lb.example.net", "192.0.2.53"),
			want: []string{"dns1.kube-system.example.com. 60 IN A 192.0.2.53", "dns1.kube-system.example.org. 60 IN A 192.0.2.53"},
		},
		{
			name: "target annotation",
			svc:  testutil.AnnotateService(testutil.NamedService("kube-system", "dns1", "192.0.2.53"), "external-dns.kubernetes.io/target", "198.51.100.53"),
			want: []string{"dns1.kube-system.example.com. 60 IN A 198.51.100.53", "dns1.kube-system.example.org. 60 IN A 198.51.100.53"},
		},
		{
			name: "external IPs of a ClusterIP Service",
			svc: func() *corev1.Service {
				svc := testutil.NamedService("kube-system", "dns1")
				svc.Spec.Type = corev1.ServiceTypeClusterIP
				svc.Spec.ExternalIPs = []string{"192.0.2.53"}
				return svc
			}(),
			want: []string{"dns1.kube-system.example.com. 60 IN A 192.0.2.53", "dns1.kube-system.example.org. 60 IN A 192.0.2.53"},
		},
		{
			name: "no addresses",
			svc:  testutil.NamedService("kube-system", "dns1"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NameserverRecords(k8sSlimService(tc.svc), cfg)
			if d := testutil.Diff(testutil.Strings(r.RRs), testutil.Want(t, tc.want...)); d != "" {
				t.Error(d)
			}
			testutil.CheckWarnings(t, r.Warnings, tc.warn)
		})
	}
}
