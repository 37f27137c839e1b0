//go:build e2e

package e2e

// The matrix of values TestChartValues renders and runs: the case type and
// the base cases (zones, nameservers, what is read); the other topics' cases
// are in chart_fleet, chart_storage, chart_deploy, chart_views, chart_ops and
// chart_anycast.

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// chartCase is one set of values: what the rendered chart must contain, and
// what the running Corefile must answer.
type chartCase struct {
	name   string
	values string // YAML; {{ns}} is the release namespace, {{other}} the second one
	// otherNamespace creates a second namespace (a secondary elsewhere).
	otherNamespace bool
	check          func(t *testing.T, ns string, m chartManifest, cf chartCorefile)
	// dns queries the running Corefile; default: the NS RRset of example.com.
	dns func(t *testing.T, ns, other string, s *server)
}

func chartCases() []chartCase {
	return slices.Concat(chartCasesBase(), chartFleetCases(), chartStorageCases(), chartDeployCases(),
		chartViewCases(), chartOpsCases(), chartHiddenPrimaryCases())
}

// chartCasesBase: the zones, the nameservers and what the plugin reads.
func chartCasesBase() []chartCase {
	return []chartCase{
		{
			name:   "defaults",
			values: "domain: example.com\n",
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				wantObjects := []string{
					"ClusterRole//k8s-gateway." + ns,
					"ClusterRoleBinding//k8s-gateway." + ns,
					"ConfigMap/" + ns + "/k8s-gateway",
					"Deployment/" + ns + "/k8s-gateway",
					"PodDisruptionBudget/" + ns + "/k8s-gateway",
					"Service/" + ns + "/k8s-gateway",
					"ServiceAccount/" + ns + "/k8s-gateway",
				}
				if got := m.kinds(); !slices.Equal(got, wantObjects) {
					t.Errorf("objects:\n got %q\nwant %q", got, wantObjects)
				}
				if len(cf) != 1 {
					t.Fatalf("want one server block, got %d", len(cf))
				}
				sb := cf[0]
				if !slices.Equal(sb.keys, []string{"example.com:1053"}) {
					t.Errorf("keys %q", sb.keys)
				}
				if got := sb.directives(); !slices.Equal(got, chartDefaultPlugins) {
					t.Errorf("directives:\n got %q\nwant %q", got, chartDefaultPlugins)
				}
				for dir, want := range map[string][][]string{
					"health":     {{"health", ":8080", "{"}, {"lameduck", "5s"}, {"}"}},
					"ready":      {{"ready", ":8181"}},
					"prometheus": {{"prometheus", "0.0.0.0:9153"}},
					"log":        {{"log", "{"}, {"class", "denial", "error"}, {"}"}},
					"errors":     {{"errors"}},
				} {
					if got := sb.dirs[dir]; !reflect.DeepEqual(got, want) {
						t.Errorf("%s: got %q, want %q", dir, got, want)
					}
				}
				zones, opts := sb.gateway(t)
				wantOpts := map[string][]string{"resources": chartAllKinds, "ttl": {"60"}, "apex": {"k8s-gateway." + ns}}
				if !slices.Equal(zones, []string{"example.com"}) || !reflect.DeepEqual(opts, wantOpts) {
					t.Errorf("k8s_gateway %q %q, want example.com %q", zones, opts, wantOpts)
				}

				cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "")
				want := chartReadOnly("/services", "/namespaces", "networking.k8s.io/ingresses", "externaldns.k8s.io/dnsendpoints",
					"gateway.networking.k8s.io/gateways", "gateway.networking.k8s.io/listenersets", "gateway.networking.x-k8s.io/xlistenersets",
					"gateway.networking.k8s.io/httproutes", "gateway.networking.k8s.io/grpcroutes",
					"gateway.networking.k8s.io/tlsroutes", "gateway.networking.k8s.io/tcproutes", "gateway.networking.k8s.io/udproutes")
				if got := chartRuleSet(t, cr.Rules); !slices.Equal(got, want) {
					t.Errorf("ClusterRole rules:\n got %q\nwant %q", got, want)
				}
				crb := chartGet[rbacv1.ClusterRoleBinding](t, m, "ClusterRoleBinding", "")
				if crb.RoleRef.Name != cr.Name || len(crb.Subjects) != 1 || crb.Subjects[0] != (rbacv1.Subject{Kind: "ServiceAccount", Name: "k8s-gateway", Namespace: ns}) {
					t.Errorf("ClusterRoleBinding %+v", crb)
				}

				svc := chartGet[corev1.Service](t, m, "Service", "k8s-gateway")
				if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || len(svc.Spec.Ports) != 2 {
					t.Fatalf("Service spec %+v", svc.Spec)
				}
				for i, proto := range []corev1.Protocol{corev1.ProtocolUDP, corev1.ProtocolTCP} {
					p := svc.Spec.Ports[i]
					if p.Port != 53 || p.Protocol != proto || p.TargetPort.String() != "dns-"+strings.ToLower(string(proto)) {
						t.Errorf("Service port %d: %+v", i, p)
					}
				}

				d := chartGet[appsv1.Deployment](t, m, "Deployment", "k8s-gateway")
				pod := d.Spec.Template.Spec
				c := pod.Containers[0]
				if !slices.Equal(c.Args, []string{"-conf", "/etc/coredns/Corefile"}) {
					t.Errorf("args %q", c.Args)
				}
				// Two pods, spread across nodes where the scheduler can.
				if spread := pod.TopologySpreadConstraints; len(spread) != 1 || spread[0].TopologyKey != "kubernetes.io/hostname" ||
					spread[0].WhenUnsatisfiable != corev1.ScheduleAnyway || !reflect.DeepEqual(spread[0].LabelSelector.MatchLabels, d.Spec.Selector.MatchLabels) {
					t.Errorf("topologySpreadConstraints %+v", spread)
				}
				if pod.ServiceAccountName != "k8s-gateway" || *d.Spec.Replicas != 2 {
					t.Errorf("serviceAccountName %q, replicas %d", pod.ServiceAccountName, *d.Spec.Replicas)
				}
				ports := map[string]string{}
				for _, p := range c.Ports {
					ports[p.Name] = fmt.Sprintf("%d/%s", p.ContainerPort, p.Protocol)
				}
				wantPorts := map[string]string{"dns-udp": "1053/UDP", "dns-tcp": "1053/TCP", "health": "8080/TCP", "ready": "8181/TCP", "metrics": "9153/TCP"}
				if !reflect.DeepEqual(ports, wantPorts) {
					t.Errorf("container ports %v, want %v", ports, wantPorts)
				}
				if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/health" || p.HTTPGet.Port.String() != "health" {
					t.Errorf("livenessProbe %+v", p)
				}
				if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/ready" || p.HTTPGet.Port.String() != "ready" {
					t.Errorf("readinessProbe %+v", p)
				}
				// With reload (the default) a changed Corefile is loaded in
				// place: nothing rolls the pods.
				if sum, ok := d.Spec.Template.Annotations["checksum/config"]; ok {
					t.Errorf("checksum/config annotation %q with the reload plugin", sum)
				}
				// Without reload, a change of the Corefile rolls the pods.
				noReload := "domain: example.com\nextraZonePlugins: [{name: errors}, {name: ready, parameters: ':8181'}, {name: health, parameters: ':8080'}]\n"
				sum := chartGet[appsv1.Deployment](t, chartRender(t, ns, noReload), "Deployment", "").Spec.Template.Annotations["checksum/config"]
				if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(sum) {
					t.Errorf("checksum/config annotation %q without the reload plugin", sum)
				}
				changed := chartGet[appsv1.Deployment](t, chartRender(t, ns, noReload+"ttl: 61\n"), "Deployment", "")
				if changed.Spec.Template.Annotations["checksum/config"] == sum {
					t.Errorf("checksum/config did not change with the Corefile")
				}
				// GOMEMLIMIT is 90% of the memory limit (256Mi); GOGC is Go's own.
				if want := []corev1.EnvVar{{Name: "GOMEMLIMIT", Value: "241591910"}}; !reflect.DeepEqual(c.Env, want) {
					t.Errorf("env %+v, want %+v", c.Env, want)
				}
				sc, psc := c.SecurityContext, pod.SecurityContext
				if sc == nil || psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
					psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
					sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
					sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
					sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
					t.Errorf("security contexts: pod %+v container %+v", psc, sc)
				}
				if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/etc/coredns" ||
					pod.Volumes[0].ConfigMap == nil || pod.Volumes[0].ConfigMap.Name != "k8s-gateway" {
					t.Errorf("config volume %+v %+v", c.VolumeMounts, pod.Volumes)
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive("example.com. 60 IN NS k8s-gateway."+ns+".example.com."))
				s.eventually(t, time.Second, "nothing.example.com.", dns.TypeA, nxdomain)
			},
		},
		{
			name: "multiple-zones",
			values: `domain: "example.com  example.org 2.0.192.in-addr.arpa"
ttl: 300
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				zs := []string{"example.com", "example.org", "2.0.192.in-addr.arpa"}
				if len(cf) != 1 || !slices.Equal(cf[0].keys, []string{"example.com:1053", "example.org:1053", "2.0.192.in-addr.arpa:1053"}) {
					t.Fatalf("server blocks %+v", cf)
				}
				zones, opts := cf[0].gateway(t)
				if !slices.Equal(zones, zs) || !slices.Equal(opts["ttl"], []string{"300"}) {
					t.Errorf("k8s_gateway %q %q", zones, opts)
				}
				// The list form renders the same Corefile.
				list := chartGet[corev1.ConfigMap](t, chartRender(t, ns, "domain: [example.com, example.org, 2.0.192.in-addr.arpa]\nttl: 300\n"), "ConfigMap", "")
				if str := chartGet[corev1.ConfigMap](t, m, "ConfigMap", ""); list.Data["Corefile"] != str.Data["Corefile"] {
					t.Errorf("domain as a list:\n%s\nas a string:\n%s", list.Data["Corefile"], str.Data["Corefile"])
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				for _, z := range []string{"example.com.", "example.org."} {
					s.eventually(t, 5*time.Second, z, dns.TypeNS, positive(z+" 300 IN NS k8s-gateway."+ns+"."+z))
				}
				// A reverse zone has no names with addresses: its nameserver is
				// the one in the first forward zone.
				rev := "2.0.192.in-addr.arpa."
				s.eventually(t, 5*time.Second, rev, dns.TypeNS, positive(rev+" 300 IN NS k8s-gateway."+ns+".example.com."))
			},
		},
		{
			// One of two releases serving the same zone: dns1, whose peer is dns2.
			name: "dual-nameserver",
			values: `domain: example.com
fullnameOverride: dns1
secondary: dns2.{{ns}}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				_, opts := cf[0].gateway(t)
				if !slices.Equal(opts["apex"], []string{"dns1." + ns}) || !slices.Equal(opts["secondary"], []string{"dns2." + ns}) {
					t.Errorf("apex %q secondary %q", opts["apex"], opts["secondary"])
				}
				chartGet[corev1.Service](t, m, "Service", "dns1")
				chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "dns1."+ns)
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive(
					"example.com. 60 IN NS dns1."+ns+".example.com.", "example.com. 60 IN NS dns2."+ns+".example.com."))
			},
		},
		{
			name: "gateway-api-only",
			values: `domain: example.com
watchedResources: [HTTPRoute, GRPCRoute, TLSRoute]
secondary: peer.{{other}}
`,
			otherNamespace: true,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				_, opts := cf[0].gateway(t)
				if !slices.Equal(opts["resources"], []string{"HTTPRoute", "GRPCRoute", "TLSRoute"}) {
					t.Errorf("resources %q", opts["resources"])
				}
				cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "")
				want := chartReadOnly("/namespaces", "gateway.networking.k8s.io/gateways", "gateway.networking.k8s.io/listenersets",
					"gateway.networking.x-k8s.io/xlistenersets", "gateway.networking.k8s.io/httproutes",
					"gateway.networking.k8s.io/grpcroutes", "gateway.networking.k8s.io/tlsroutes")
				if got := chartRuleSet(t, cr.Rules); !slices.Equal(got, want) {
					t.Errorf("ClusterRole rules:\n got %q\nwant %q", got, want)
				}
				// Services are not watched: a Role in the namespaces of the
				// apex and the secondary gives their glue.
				var roleNS []string
				for _, o := range m.objs {
					switch o.Kind {
					case "Role":
						r := chartGet[rbacv1.Role](t, chartManifest{objs: []chartObject{o}}, "Role", "")
						if got := chartRuleSet(t, r.Rules); !slices.Equal(got, chartReadOnly("/services")) {
							t.Errorf("Role %s/%s rules %q", r.Namespace, r.Name, got)
						}
						roleNS = append(roleNS, r.Namespace)
					case "RoleBinding":
						b := chartGet[rbacv1.RoleBinding](t, chartManifest{objs: []chartObject{o}}, "RoleBinding", "")
						if b.RoleRef.Kind != "Role" || len(b.Subjects) != 1 || b.Subjects[0].Name != "k8s-gateway" || b.Subjects[0].Namespace != ns {
							t.Errorf("RoleBinding %+v", b)
						}
					}
				}
				if len(roleNS) != 2 || roleNS[0] != ns || !strings.HasPrefix(roleNS[1], "e2e-") || roleNS[1] == ns {
					t.Errorf("Roles in namespaces %q, want %s and the secondary's", roleNS, ns)
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive(
					"example.com. 60 IN NS k8s-gateway."+ns+".example.com.", "example.com. 60 IN NS peer."+other+".example.com."))
			},
		},
		{
			name: "filters",
			values: `domain: example.com
watchedResources: [Ingress, Service]
fallthrough: {enabled: true, zones: [example.com]}
filters:
  ingressClasses: [nginx, traefik]
  gatewayClasses: [eg]
  namespaces: [{{ns}}, {{other}}]
  labelSelector: "env in (prod, staging),!skip"
  serviceLabelSelectors: [tier=frontend, public=yes]
`,
			otherNamespace: true,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				_, opts := cf[0].gateway(t)
				other := opts["namespaces"][len(opts["namespaces"])-1]
				want := map[string][]string{
					"resources":             {"Ingress", "Service"},
					"ttl":                   {"60"},
					"apex":                  {"k8s-gateway." + ns},
					"fallthrough":           {"example.com"},
					"ingressClasses":        {"nginx", "traefik"},
					"gatewayClasses":        {"eg"},
					"namespaces":            {ns, other},
					"labelSelector":         {"env in (prod, staging),!skip"},
					"serviceLabelSelectors": {"tier=frontend", "public=yes"},
				}
				if !reflect.DeepEqual(opts, want) {
					t.Errorf("k8s_gateway options:\n got %q\nwant %q", opts, want)
				}
				// namespaces: a Role in each for the watched kinds; the
				// ClusterRole has only the cluster-scoped IngressClasses, for
				// the default class of ingressClasses.
				cr := chartGet[rbacv1.ClusterRole](t, m, "ClusterRole", "")
				if got := chartRuleSet(t, cr.Rules); !slices.Equal(got, chartReadOnly("networking.k8s.io/ingressclasses")) {
					t.Errorf("ClusterRole rules %q", got)
				}
				chartCheckRoles(t, m, ns, map[string][]string{
					ns:    chartReadOnly("/services", "networking.k8s.io/ingresses"),
					other: chartReadOnly("/services", "networking.k8s.io/ingresses"),
				})
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive("example.com. 60 IN NS k8s-gateway."+ns+".example.com."))
			},
		},
		{
			name: "namespaces-only",
			values: `domain: example.com
watchedResources: [Service, DNSEndpoint, HTTPRoute]
filters:
  namespaces: [{{other}}]
tenancy:
  events: true
`,
			otherNamespace: true,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				_, opts := cf[0].gateway(t)
				other := opts["namespaces"][0]
				// Nothing cluster-scoped is needed (routes read the listed
				// Namespace by name): no ClusterRole. The release's namespace
				// is not listed: a Role there for the nameserver Service alone.
				for _, o := range m.objs {
					if o.Kind == "ClusterRole" || o.Kind == "ClusterRoleBinding" {
						t.Errorf("a %s with namespaces and nothing cluster-scoped to read", o.Kind)
					}
				}
				rules := append(chartReadOnly("/services", "externaldns.k8s.io/dnsendpoints", "gateway.networking.k8s.io/gateways",
					"gateway.networking.k8s.io/listenersets", "gateway.networking.k8s.io/httproutes", "gateway.networking.x-k8s.io/xlistenersets"),
					"/events:create,patch", "/namespaces:get,watch")
				slices.Sort(rules)
				chartCheckRoles(t, m, ns, map[string][]string{other: rules, ns: chartReadOnly("/services")})
			},
		},
		{
			// A catalog zone of the zones: a key of the server block, and
			// the option; the running Corefile answers the catalog's SOA.
			name:   "catalog",
			values: "domain: example.com example.org\ncatalog: {zone: catalog.invalid, group: blue}\n",
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				sb := cf[0]
				if !slices.Contains(sb.keys, "catalog.invalid:1053") {
					t.Errorf("keys %q: no catalog.invalid:1053", sb.keys)
				}
				if _, opts := sb.gateway(t); !slices.Equal(opts["catalog"], []string{"catalog.invalid", "group", "blue"}) {
					t.Errorf("catalog option %q", opts["catalog"])
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "version.catalog.invalid.", dns.TypeTXT, positive(`version.catalog.invalid. 60 IN TXT "2"`))
			},
		},
	}
}
