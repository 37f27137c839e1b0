package source

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// k8sTestZones are the zones of the source tests: a zone, a more specific zone
// inside it, and an unrelated one.
var k8sTestZones = []string{"example.com.", "sub.example.com.", "example.org."}

func k8sTestConfig() *Config {
	return &Config{Zones: k8sTestZones, TTL: 60}
}

// k8sSlimIngress converts an Ingress as its informer does.
func k8sSlimIngress(ing *networkingv1.Ingress) *Ingress {
	out, _ := slimIngress(ing)
	return out.(*Ingress)
}

// k8sIngressCase is one Ingress and what ingressRecords makes of it.
type k8sIngressCase struct {
	name string
	cfg  *Config // k8sTestConfig() when nil
	ing  *networkingv1.Ingress
	want []string
	warn []string // substrings of expected warnings; none allowed when empty
}

// k8sIngressCases are the Ingress source cases, also run through the slim
// transform (kubernetes_test.go) and used as fuzz seeds.
func k8sIngressCases() []k8sIngressCase {
	long63 := strings.Repeat("a", 63)
	long64 := strings.Repeat("a", 64)
	// 4 labels of 63 plus ".example.com" is longer than 253 characters.
	tooLong := strings.Join([]string{long63, long63, long63, long63}, ".") + ".example.com"
	withFilter := func(classes ...string) *Config {
		c := k8sTestConfig()
		c.IngressClasses = classes
		return c
	}

	cases := []k8sIngressCase{
		{
			name: "one host, one IPv4",
			ing:  testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "rule and TLS hosts, deduplicated",
			ing:  testutil.Ingress([]string{"www.example.com", "api.example.com"}, []string{"www.example.com", "tls-only.example.com"}, "192.0.2.1"),
			want: []string{
				"www.example.com. 60 IN A 192.0.2.1",
				"api.example.com. 60 IN A 192.0.2.1",
				"tls-only.example.com. 60 IN A 192.0.2.1",
			},
		},
		{
			name: "same host in two rules",
			ing:  testutil.Ingress([]string{"www.example.com", "WWW.example.com"}, nil, "192.0.2.1"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "IPv4, IPv6 and v4-mapped IPv6; duplicates collapse",
			ing:  testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1", "2001:db8::1", "::ffff:192.0.2.7", "192.0.2.1"),
			want: []string{
				"www.example.com. 60 IN A 192.0.2.1",
				"www.example.com. 60 IN A 192.0.2.7",
				"www.example.com. 60 IN AAAA 2001:db8::1",
			},
		},
		{
			name: "load balancer hostname gives a CNAME",
			ing:  testutil.Ingress([]string{"www.example.com"}, nil, "LB-1.elb.amazonaws.com"),
			want: []string{"www.example.com. 60 IN CNAME lb-1.elb.amazonaws.com."},
		},
		{
			name: "IPs and a hostname: IPs only",
			ing:  testutil.Ingress([]string{"www.example.com"}, nil, "lb.example.net", "192.0.2.1"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "entry with both ip and hostname",
			ing: func() *networkingv1.Ingress {
				ing := testutil.Ingress([]string{"www.example.com"}, nil)
				ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1", Hostname: "lb.example.net"}}
				return ing
			}(),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "two hostnames: the first is the CNAME, with a warning",
			ing:  testutil.Ingress([]string{"www.example.com"}, nil, "lb1.example.net", "lb2.example.net"),
			want: []string{"www.example.com. 60 IN CNAME lb1.example.net."},
			warn: []string{"only lb1.example.net. is published"},
		},
		{
			name: "hosts in several zones",
			ing:  testutil.Ingress([]string{"a.sub.example.com", "b.example.com", "c.example.org", "example.org"}, nil, "192.0.2.1"),
			want: []string{
				"a.sub.example.com. 60 IN A 192.0.2.1",
				"b.example.com. 60 IN A 192.0.2.1",
				"c.example.org. 60 IN A 192.0.2.1",
				"example.org. 60 IN A 192.0.2.1",
			},
		},
		{
			name: "host outside every zone is skipped with a warning",
			ing:  testutil.Ingress([]string{"www.example.net", "www.example.com"}, []string{"tls.notexample.com"}, "192.0.2.1"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
			warn: []string{`"www.example.net"`, `"tls.notexample.com"`},
		},
		{
			name: "invalid hosts warn, the rest publishes",
			ing: testutil.Ingress([]string{
				"a..example.com",            // empty label
				long64 + ".example.com",     // label longer than 63
				"b@d.example.com",           // bad character
				tooLong,                     // longer than 253
				"-dash.example.com",         // leading hyphen
				"ok.example.com",            // fine
				long63 + ".sub.example.com", // a 63 character label is fine
			}, []string{"bad host.example.com"}, "192.0.2.1"),
			want: []string{
				"ok.example.com. 60 IN A 192.0.2.1",
				long63 + ".sub.example.com. 60 IN A 192.0.2.1",
			},
			warn: []string{"a..example.com", "longer than 63", "b@d.example.com", "longer than 253", "-dash.example.com", "bad host.example.com"},
		},
		{
			name: "wildcard host",
			ing:  testutil.Ingress([]string{"*.example.com", "*.apps.sub.example.com"}, nil, "192.0.2.1"),
			want: []string{
				"*.example.com. 60 IN A 192.0.2.1",
				"*.apps.sub.example.com. 60 IN A 192.0.2.1",
			},
		},
		{
			name: "wildcard not in the first label is invalid",
			ing:  testutil.Ingress([]string{"a.*.example.com", "*"}, nil, "192.0.2.1"),
			warn: []string{"a.*.example.com", `"*"`},
		},
		{
			name: "class filter: spec.ingressClassName matches",
			cfg:  withFilter("nginx", "traefik"),
			ing:  testutil.WithIngressClass(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"), "traefik"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "class filter: spec.ingressClassName does not match",
			cfg:  withFilter("nginx"),
			ing:  testutil.WithIngressClass(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"), "traefik"),
		},
		{
			name: "class filter: legacy annotation matches",
			cfg:  withFilter("nginx"),
			ing:  testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"), "kubernetes.io/ingress.class", "nginx"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "class filter: legacy annotation does not match",
			cfg:  withFilter("nginx"),
			ing:  testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"), "kubernetes.io/ingress.class", "traefik"),
		},
		{
			name: "class filter: spec.ingressClassName wins over the annotation",
			cfg:  withFilter("nginx"),
			ing:  testutil.WithIngressClass(testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"), "kubernetes.io/ingress.class", "nginx"), "traefik"),
		},
		{
			name: "class filter: no class at all",
			cfg:  withFilter("nginx"),
			ing:  testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
		},
		{
			name: "class filter: empty spec.ingressClassName",
			cfg:  withFilter("nginx"),
			ing:  testutil.WithIngressClass(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"), ""),
		},
		{
			name: "no filter: no class at all publishes",
			ing:  testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "no filter: any class publishes",
			ing:  testutil.WithIngressClass(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"), "whatever"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "ignore label",
			ing: func() *networkingv1.Ingress {
				ing := testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1")
				ing.Labels = map[string]string{"k8s-gateway.dns/ignore": "true"}
				return ing
			}(),
		},
		{
			name: "ignore label is case-insensitive",
			ing: func() *networkingv1.Ingress {
				ing := testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1")
				ing.Labels = map[string]string{"k8s-gateway.dns/ignore": "True"}
				return ing
			}(),
		},
		{
			name: "ignore label set to false publishes",
			ing: func() *networkingv1.Ingress {
				ing := testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1")
				ing.Labels = map[string]string{"k8s-gateway.dns/ignore": "false"}
				return ing
			}(),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "no status publishes nothing",
			ing:  testutil.Ingress([]string{"www.example.com"}, nil),
		},
		{
			name: "no hosts publishes nothing",
			ing:  testutil.Ingress(nil, nil, "192.0.2.1"),
		},
		{
			name: "rule without host is skipped",
			ing:  testutil.Ingress([]string{"", "www.example.com"}, []string{""}, "192.0.2.1"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "alpha target annotation with IPs overrides the status",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.alpha.kubernetes.io/target", "198.51.100.1, 2001:db8::2"),
			want: []string{
				"www.example.com. 60 IN A 198.51.100.1",
				"www.example.com. 60 IN AAAA 2001:db8::2",
			},
		},
		{
			name: "target annotation with a name gives a CNAME",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.kubernetes.io/target", "Edge.CDN.example.net."),
			want: []string{"www.example.com. 60 IN CNAME edge.cdn.example.net."},
		},
		{
			name: "target annotation without status",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil),
				"external-dns.kubernetes.io/target", "198.51.100.1"),
			want: []string{"www.example.com. 60 IN A 198.51.100.1"},
		},
		{
			name: "the GA target annotation wins over the alpha one",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil),
				"external-dns.alpha.kubernetes.io/target", "198.51.100.1",
				"external-dns.kubernetes.io/target", "198.51.100.2"),
			want: []string{"www.example.com. 60 IN A 198.51.100.2"},
		},
		{
			name: "invalid target warns",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.kubernetes.io/target", "bad target!, 198.51.100.1"),
			want: []string{"www.example.com. 60 IN A 198.51.100.1"},
			warn: []string{`"bad target!"`},
		},
		{
			name: "empty target annotation does not override the status",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.alpha.kubernetes.io/target", " "),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
		},
		{
			name: "target annotation without a valid target does not override the status",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.alpha.kubernetes.io/target", "bad target!,",
				"external-dns.kubernetes.io/target", "fe80::1%eth0"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
			warn: []string{`"bad target!"`, `"fe80::1%eth0"`, "no valid target"},
		},
		{
			name: "empty alpha target annotation, valid new one",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.alpha.kubernetes.io/target", "",
				"external-dns.kubernetes.io/target", "198.51.100.2"),
			want: []string{"www.example.com. 60 IN A 198.51.100.2"},
		},
		{
			name: "ttl annotation",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.alpha.kubernetes.io/ttl", " 300 "),
			want: []string{"www.example.com. 300 IN A 192.0.2.1"},
		},
		{
			name: "ttl annotation with the new prefix, zero",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.kubernetes.io/ttl", "0"),
			want: []string{"www.example.com. 0 IN A 192.0.2.1"},
		},
		{
			name: "ttl annotation as a duration, as external-dns reads it",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.alpha.kubernetes.io/ttl", "5m30.9s"),
			want: []string{"www.example.com. 330 IN A 192.0.2.1"},
		},
		{
			name: "invalid ttl annotation warns and uses the default",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.alpha.kubernetes.io/ttl", "five minutes"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
			warn: []string{`invalid TTL "five minutes"`},
		},
		{
			name: "negative duration ttl annotation",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.alpha.kubernetes.io/ttl", "-1m"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
			warn: []string{`invalid TTL "-1m"`},
		},
		{
			name: "duration ttl annotation beyond 2^31-1 seconds",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.alpha.kubernetes.io/ttl", "600000h"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
			warn: []string{`invalid TTL "600000h"`},
		},
		{
			name: "negative ttl annotation",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.kubernetes.io/ttl", "-1"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
			warn: []string{`invalid TTL "-1"`},
		},
		{
			name: "ttl annotation beyond 2^31-1",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.kubernetes.io/ttl", "2147483648"),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
			warn: []string{`invalid TTL "2147483648"`},
		},
		{
			name: "hostname annotations add names, relative ones under every zone",
			ing: testutil.AnnotateIngress(testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1"),
				"external-dns.alpha.kubernetes.io/hostname", "extra.example.org, rel",
				"coredns.io/hostname", "www.example.com"),
			want: []string{
				"www.example.com. 60 IN A 192.0.2.1",
				"extra.example.org. 60 IN A 192.0.2.1",
				"rel.example.com. 60 IN A 192.0.2.1",
				"rel.sub.example.com. 60 IN A 192.0.2.1",
				"rel.example.org. 60 IN A 192.0.2.1",
			},
		},
		{
			name: "host equal to its CNAME target is skipped",
			ing:  testutil.Ingress([]string{"www.example.com", "app.example.com"}, nil, "www.example.com"),
			want: []string{"app.example.com. 60 IN CNAME www.example.com."},
			warn: []string{"points at itself"},
		},
		{
			name: "invalid load balancer IP warns",
			ing: func() *networkingv1.Ingress {
				ing := testutil.Ingress([]string{"www.example.com"}, nil, "192.0.2.1")
				ing.Status.LoadBalancer.Ingress = append(ing.Status.LoadBalancer.Ingress,
					networkingv1.IngressLoadBalancerIngress{IP: "fe80::1%eth0"},
					networkingv1.IngressLoadBalancerIngress{IP: "192.0.2.300"})
				return ing
			}(),
			want: []string{"www.example.com. 60 IN A 192.0.2.1"},
			warn: []string{`"fe80::1%eth0"`, `"192.0.2.300"`},
		},
		{
			name: "a name in the ip field is an invalid IP, not a CNAME target",
			ing: func() *networkingv1.Ingress {
				ing := testutil.Ingress([]string{"www.example.com"}, nil)
				ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "lb.example.net"}}
				return ing
			}(),
			warn: []string{`invalid IP "lb.example.net"`},
		},
	}
	for i := range cases {
		if cases[i].cfg == nil {
			cases[i].cfg = k8sTestConfig()
		}
	}
	return cases
}

func TestIngressRecords(t *testing.T) {
	for _, tc := range k8sIngressCases() {
		t.Run(tc.name, func(t *testing.T) {
			r := ingressRecords(k8sSlimIngress(tc.ing), tc.cfg, "")
			if d := testutil.Diff(testutil.Strings(r.RRs), testutil.Want(t, tc.want...)); d != "" {
				t.Error(d)
			}
			testutil.CheckWarnings(t, r.Warnings, tc.warn)
		})
	}
}
