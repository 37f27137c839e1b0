//go:build e2e

package e2e

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// chartStorageCases: the persisted copy (emptyDir or a claim) and zone files.
func chartStorageCases() []chartCase {
	return []chartCase{
		{
			name: "persistence",
			values: `domain: example.com
watchedResources: [Service]
persistence: {enabled: true}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				if _, opts := cf[0].gateway(t); !slices.Equal(opts["persist"], []string{"/var/lib/k8s-gateway"}) {
					t.Errorf("persist option %q, want /var/lib/k8s-gateway", opts["persist"])
				}
				pod := chartGet[appsv1.Deployment](t, m, "Deployment", "").Spec.Template.Spec
				if sc := pod.SecurityContext; sc == nil || sc.FSGroup == nil || *sc.FSGroup != 65532 {
					t.Errorf("pod securityContext %+v, want fsGroup 65532", sc)
				}
				vol := pod.Volumes[slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == "zone-copies" })]
				if vol.EmptyDir == nil || vol.EmptyDir.SizeLimit == nil || vol.EmptyDir.SizeLimit.String() != "64Mi" {
					t.Errorf("volume %+v, want an emptyDir of 64Mi", vol)
				}
				mounts := pod.Containers[0].VolumeMounts
				if !slices.ContainsFunc(mounts, func(vm corev1.VolumeMount) bool {
					return vm.Name == "zone-copies" && vm.MountPath == "/var/lib/k8s-gateway" && !vm.ReadOnly
				}) {
					t.Errorf("volume mounts %+v", mounts)
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				s.eventually(t, 5*time.Second, "example.com.", dns.TypeNS, positive("example.com. 60 IN NS k8s-gateway."+ns+".example.com."))
				copyFile := filepath.Join(filepath.Dir(s.Corefile), "persist", "example.com.zone")
				for begin := time.Now(); copySerial(t, copyFile) != soaSerial(s); time.Sleep(20 * time.Millisecond) {
					if time.Since(begin) > 10*time.Second {
						t.Fatalf("no copy of the zone's serial %d in %s", soaSerial(s), copyFile)
					}
				}
			},
		},
		{
			name: "persistence-claim",
			values: `domain: example.com
watchedResources: [Service]
podSecurityContext: {runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 2000}
persistence: {enabled: true, mountPath: /data, existingClaim: dns-copies}
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				if _, opts := cf[0].gateway(t); !slices.Equal(opts["persist"], []string{"/data"}) {
					t.Errorf("persist option %q, want /data", opts["persist"])
				}
				pod := chartGet[appsv1.Deployment](t, m, "Deployment", "").Spec.Template.Spec
				if sc := pod.SecurityContext; sc == nil || sc.FSGroup == nil || *sc.FSGroup != 2000 {
					t.Errorf("pod securityContext %+v, want the given fsGroup 2000", sc)
				}
				vol := pod.Volumes[slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == "zone-copies" })]
				if vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != "dns-copies" || vol.EmptyDir != nil {
					t.Errorf("volume %+v, want the claim dns-copies", vol)
				}
			},
		},
		{
			name: "zone-files",
			values: `domain: example.com
fallthrough: {enabled: true}
zoneFiles:
  - filename: db.example.com
    domains: example.com
    contents: |
      $ORIGIN example.com.
      @       60 IN SOA k8s-gateway.{{ns}}.example.com. hostmaster.example.com. 1 300 60 604800 60
      @       60 IN NS  k8s-gateway.{{ns}}.example.com.
      static  60 IN A   198.51.100.1
  - filename: db.example.org
    domains: [example.org]
    contents: |
      $ORIGIN example.org.
      @       60 IN SOA ns1.example.org. hostmaster.example.org. 7 300 60 604800 60
      @       60 IN NS  ns1.example.org.
      ns1     60 IN A   198.51.100.53
      www     60 IN A   198.51.100.80
`,
			check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
				cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "")
				// Each file's key is its name and a hash of its contents (see TestChartZoneFileEdit).
				com, org := chartZoneFileKey(t, cm.Data, "db.example.com"), chartZoneFileKey(t, cm.Data, "db.example.org")
				if !strings.Contains(cm.Data[com], "static  60 IN A   198.51.100.1") || !strings.Contains(cm.Data[org], "www     60 IN A   198.51.100.80") {
					t.Errorf("zone files in the ConfigMap: %q", cm.Data)
				}
				if len(cf) != 2 {
					t.Fatalf("want two server blocks, got %d", len(cf))
				}
				// The zone of k8s_gateway: its file after it, for fallthrough.
				if got, want := cf[0].dirs["file"], [][]string{{"file", "/etc/coredns/" + com, "example.com"}}; !reflect.DeepEqual(got, want) {
					t.Errorf("file in the k8s_gateway block: %q, want %q", got, want)
				}
				_, opts := cf[0].gateway(t)
				if got, ok := opts["fallthrough"]; !ok || len(got) != 0 {
					t.Errorf("fallthrough %q (present %v)", got, ok)
				}
				// Another zone: a server block of its own.
				if !slices.Equal(cf[1].keys, []string{"example.org:1053"}) || !slices.Equal(cf[1].directives(), []string{"errors", "file"}) ||
					!reflect.DeepEqual(cf[1].dirs["file"], [][]string{{"file", "/etc/coredns/" + org, "example.org"}}) {
					t.Errorf("zone file server block %+v", cf[1])
				}
			},
			dns: func(t *testing.T, ns, other string, s *server) {
				// The file plugin puts the zone's NS in the authority section.
				s.eventually(t, 5*time.Second, "static.example.com.", dns.TypeA, expectation{
					Rcode: "NOERROR", Answer: []string{"static.example.com. 60 IN A 198.51.100.1"}, Authority: []string{"NS"}})
				s.eventually(t, time.Second, "www.example.org.", dns.TypeA, expectation{
					Rcode: "NOERROR", Answer: []string{"www.example.org. 60 IN A 198.51.100.80"}, Authority: []string{"NS"}})
				s.eventually(t, time.Second, "example.com.", dns.TypeNS, positive("example.com. 60 IN NS k8s-gateway."+ns+".example.com."))
			},
		},
	}
}
