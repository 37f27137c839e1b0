//go:build e2e

package e2e

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
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
`,
		check: func(t *testing.T, ns string, m chartManifest, cf chartCorefile) {
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
				want := slices.Clone(chartDefaultPlugins)
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
		},
		dns: func(t *testing.T, ns, other string, s *server) {
			nsRR := positive("example.com. 60 IN NS k8s-gateway." + ns + ".example.com.")
			for _, src := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
				s.eventuallyFrom(t, src, 5*time.Second, "example.com.", dns.TypeNS, nsRR)
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
