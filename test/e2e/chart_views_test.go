//go:build e2e

package e2e

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
)

// chartViewCases: the views and defaultView values render one server block
// per view, in order, before the default block, each with its own view
// expression, address ranges and plugins, and the Corefile runs: each
// client address reaches its block.
func chartViewCases() []chartCase {
	return []chartCase{{
		name: "views",
		values: `domain: example.com
views:
  - name: internal
    clients: [127.0.0.2/32, 10.0.0.0/8]
    include: [10.0.0.0/8, fc00::/7]
    plugins:
      - {name: transfer, configBlock: "to 127.0.0.2"}
  - name: lab
    expr: "incidr(client_ip(), '127.0.0.3/32')"
    exclude: [0.0.0.0/0, "::/0"]
defaultView:
  exclude: [10.0.0.0/8, fc00::/7]
dnssec: {keySecret: k8sgw-dnssec, keyName: Kexample.com.+013+01234}
`,
		check: chartCheckViews,
		dns: func(t *testing.T, ns, other string, s *server) {
			nsRR := positive("example.com. 60 IN NS k8s-gateway." + ns + ".example.com.")
			for _, src := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
				s.eventuallyFrom(t, src, 5*time.Second, "example.com.", dns.TypeNS, nsRR)
			}
			// Every block signs: DNSKEY from each client's view.
			for _, src := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
				r, err := s.dig("example.com.", "DNSKEY", "-b", src, "+dnssec")
				if err != nil || r.Rcode != "NOERROR" || len(r.Answer) != 2 {
					t.Errorf("DNSKEY from %s: %s %v, want the key and its RRSIG", src, r, err)
				}
			}
			// Only the internal view's transfer plugin lets 127.0.0.2 transfer.
			if out := digAXFR(t, s, "127.0.0.2"); !slices.ContainsFunc(digRRs(out), func(rr string) bool { return rr == "example.com. 60 IN NS k8s-gateway."+ns+".example.com." }) {
				t.Errorf("AXFR from 127.0.0.2 (internal view):\n%s", out)
			}
			for _, src := range []string{"127.0.0.1", "127.0.0.3"} {
				if out := digAXFR(t, s, src); len(digRRs(out)) != 0 {
					t.Errorf("AXFR from %s, a view without transfer:\n%s", src, out)
				}
			}
		},
	}}
}

// chartCheckViews checks the Corefile and the key's volume that the views
// case renders.
func chartCheckViews(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
	if len(cf) != 3 {
		t.Fatalf("want three server blocks (internal, lab, default), got %d", len(cf))
	}
	wantView := [][][]string{
		{{"view", "internal", "{"}, {"expr", "incidr(client_ip(),", "'127.0.0.2/32')", "||", "incidr(client_ip(),", "'10.0.0.0/8')"}, {"}"}},
		{{"view", "lab", "{"}, {"expr", "incidr(client_ip(),", "'127.0.0.3/32')"}, {"}"}},
		nil,
	}
	wantRanges := []map[string][]string{
		{"include": {"10.0.0.0/8", "fc00::/7"}},
		{"exclude": {"0.0.0.0/0", "::/0"}},
		{"exclude": {"10.0.0.0/8", "fc00::/7"}},
	}
	for i, sb := range cf {
		if !slices.Equal(sb.keys, []string{"example.com:1053"}) {
			t.Errorf("block %d keys %q", i, sb.keys)
		}
		if got := sb.dirs["view"]; !reflect.DeepEqual(got, wantView[i]) {
			t.Errorf("block %d view: got %q, want %q", i, got, wantView[i])
		}
		want := append(slices.Clone(chartDefaultPlugins), "dnssec")
		if got, want := sb.dirs["dnssec"], [][]string{{"dnssec", "example.com", "{"}, {"key", "file", "/etc/k8s-gateway/dnssec/Kexample.com.+013+01234"}, {"}"}}; !reflect.DeepEqual(got, want) {
			t.Errorf("block %d dnssec: got %q, want %q", i, got, want)
		}
		if i < 2 {
			want = append(want, "view")
		}
		if i == 0 {
			want = append(want, "transfer")
		}
		slices.Sort(want)
		if got := sb.directives(); !slices.Equal(got, want) {
			t.Errorf("block %d directives:\n got %q\nwant %q", i, got, want)
		}
		_, opts := sb.gateway(t)
		for _, opt := range []string{"include", "exclude"} {
			if got, want := opts[opt], wantRanges[i][opt]; !slices.Equal(got, want) {
				t.Errorf("block %d %s: got %q, want %q", i, opt, got, want)
			}
		}
	}
	d := chartGet[appsv1.Deployment](t, m, "Deployment", "k8s-gateway")
	vols := d.Spec.Template.Spec.Volumes
	if v := vols[len(vols)-1]; v.Name != "dnssec-key" || v.Secret == nil || v.Secret.SecretName != "k8sgw-dnssec" || len(v.Secret.Items) != 2 ||
		v.Secret.Items[0].Path != "Kexample.com.+013+01234.key" || v.Secret.Items[1].Path != "Kexample.com.+013+01234.private" {
		t.Errorf("the key's volume: %+v", v)
	}
	mounts := d.Spec.Template.Spec.Containers[0].VolumeMounts
	if mt := mounts[len(mounts)-1]; mt.Name != "dnssec-key" || mt.MountPath != "/etc/k8s-gateway/dnssec" || !mt.ReadOnly {
		t.Errorf("the key's mount: %+v", mt)
	}
}
