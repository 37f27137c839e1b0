package gateway

import (
	"strings"
	"testing"

	"github.com/coredns/caddy"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// TestParseAPILimits: apiserver_qps and apiserver_burst (the kubernetes
// plugin's names) set the API clients' limits; without them the defaults
// hold; bad values name the line.
func TestParseAPILimits(t *testing.T) {
	kubeconfig := testutil.Kubeconfig(t)
	for _, c := range []struct {
		name, options string
		want          watch.ClientLimits // of the rest.Config
		err           string
	}{
		{"defaults", "", watch.DefaultClientLimits, ""},
		{"both", "apiserver_qps 5.5\n apiserver_burst 7", watch.ClientLimits{QPS: 5.5, Burst: 7}, ""},
		{"qps only", "apiserver_qps 20", watch.ClientLimits{QPS: 20, Burst: 100}, ""},
		{"zero qps", "apiserver_qps 0", watch.ClientLimits{}, "Testfile:3 - Error during parsing: apiserver_qps must be a number above 0"},
		{"bad burst", "apiserver_burst many", watch.ClientLimits{}, "Testfile:3 - Error during parsing: apiserver_burst must be an integer from 1 to 100000"},
		{"no argument", "apiserver_burst", watch.ClientLimits{}, "apiserver_burst BURST"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctl := caddy.NewTestController("dns", "k8s_gateway example.com {\n kubeconfig "+kubeconfig+"\n "+c.options+"\n}")
			g, err := parse(ctl)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := g.restConfig(g.kubeconfig, g.kubecontext)
			if err != nil {
				t.Fatal(err)
			}
			if got := (watch.ClientLimits{QPS: cfg.QPS, Burst: cfg.Burst}); got != c.want {
				t.Errorf("limits %+v, want %+v", got, c.want)
			}
		})
	}
}
