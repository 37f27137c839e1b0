//go:build e2e

package e2e

// Rendered Corefiles: parsing, and a pod's Corefile made runnable on loopback
// (chartLocalCorefile).

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coredns/caddy/caddyfile"
)

// chartCorefile is a parsed Corefile: its server blocks, each with its keys and,
// per directive, the lines of its tokens (nested blocks included).
type chartCorefile []chartServerBlock

type chartServerBlock struct {
	keys []string
	dirs map[string][][]string
}

func parseChartCorefile(t *testing.T, text string) chartCorefile {
	t.Helper()
	blocks, err := caddyfile.Parse("Corefile", strings.NewReader(text), nil)
	if err != nil {
		t.Fatalf("the rendered Corefile does not parse: %v\n%s", err, text)
	}
	var cf chartCorefile
	for _, b := range blocks {
		sb := chartServerBlock{keys: b.Keys, dirs: map[string][][]string{}}
		for dir, toks := range b.Tokens {
			var lines [][]string
			last := -1
			for _, tok := range toks {
				if tok.Line != last {
					lines = append(lines, nil)
					last = tok.Line
				}
				lines[len(lines)-1] = append(lines[len(lines)-1], tok.Text)
			}
			sb.dirs[dir] = lines
		}
		cf = append(cf, sb)
	}
	return cf
}

func (sb chartServerBlock) directives() []string {
	var out []string
	for d := range sb.dirs {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// gateway returns the zones of the k8s_gateway directive and its options.
func (sb chartServerBlock) gateway(t *testing.T) (zones []string, opts map[string][]string) {
	t.Helper()
	lines := sb.dirs["k8s_gateway"]
	if len(lines) < 2 || lines[0][len(lines[0])-1] != "{" || !slices.Equal(lines[len(lines)-1], []string{"}"}) {
		t.Fatalf("k8s_gateway directive without an option block: %q", lines)
	}
	zones = lines[0][1 : len(lines[0])-1]
	opts = map[string][]string{}
	for _, l := range lines[1 : len(lines)-1] {
		if _, dup := opts[l[0]]; dup {
			t.Errorf("k8s_gateway option %s given twice", l[0])
		}
		opts[l[0]] = l[1:]
	}
	return zones, opts
}

// chartDefaultPlugins are the directives of the chart's default server block.
var chartDefaultPlugins = []string{"errors", "health", "k8s_gateway", "loadbalance", "log", "loop", "prometheus", "ready", "reload"}

var chartAllKinds = []string{"Ingress", "Service", "DNSEndpoint", "HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"}

// chartLocalCorefile makes a Corefile rendered for a pod runnable by the
// harness's startServer, and returns its path relative to the repository.
// Only what ties it to the pod changes, line by line:
//
//   - server block keys ZONE:1053 listen on ZONE:{$K8S_GATEWAY_PORT}, and each
//     block gets `bind 127.0.0.1`;
//   - `ready ADDR` becomes `ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}` (the port
//     startServer polls); `health` and `prometheus` move to free loopback ports;
//     `lameduck 5s` becomes `lameduck 100ms` (stopping takes no 5 s);
//   - the k8s_gateway block gets `kubeconfig {$KUBECONFIG}` (a ServiceAccount
//     token kubeconfig instead of the pod's in-cluster credentials);
//   - /etc/coredns/ (the ConfigMap's mount) becomes a directory holding the
//     ConfigMap's other keys (the zone files).
//
// Everything else (zones, plugins, every k8s_gateway option) runs as rendered.
func chartLocalCorefile(t *testing.T, data map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range data {
		if k != "Corefile" {
			if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out []string
	plugin := func(line string) (indent, name string) {
		trimmed := strings.TrimLeft(line, " \t")
		name, _, _ = strings.Cut(trimmed, " ")
		return line[:len(line)-len(trimmed)], name
	}
	for _, line := range strings.Split(data["Corefile"], "\n") {
		indent, name := plugin(line)
		block := ""
		if strings.HasSuffix(strings.TrimSpace(line), "{") {
			block = " {"
		}
		switch {
		case indent == "" && block != "":
			line = strings.ReplaceAll(line, ":1053", ":{$K8S_GATEWAY_PORT}")
			out = append(out, line, "    bind 127.0.0.1")
			continue
		case name == "ready":
			line = indent + "ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}" + block
		case name == "health" && len(indent) <= 4 || name == "prometheus": // not k8s_gateway's health option
			line = indent + name + " 127.0.0.1:" + strconv.Itoa(freePort(t)) + block
		case name == "lameduck":
			line = indent + "lameduck 100ms"
		case name == "key" && strings.Contains(line, "/etc/k8s-gateway/dnssec/"):
			key, _ := dnssecKey(t, dir) // dnssec.keySecret: a key of the test's own
			line = indent + "key file " + key
		case name == "persist":
			line = indent + "persist " + filepath.Join(dir, "persist")
		case name == "k8s_gateway" && block != "":
			out = append(out, line, indent+"    kubeconfig {$KUBECONFIG}")
			continue
		case name == "kubeconfig" && strings.Contains(line, "/etc/k8s-gateway/clusters/"):
			line = indent + "kubeconfig {$KUBECONFIG}" // fleet.clusters: every cluster is the test cluster
		case name == "cluster" && block == "":
			line += " { kubeconfig {$KUBECONFIG} }"
		case name == "cluster" && strings.Contains(line, "cluster local {"): // fleet.localPriority
			out = append(out, line, indent+"    kubeconfig {$KUBECONFIG}")
			continue
		}
		out = append(out, strings.ReplaceAll(line, "/etc/coredns/", dir+"/"))
	}
	path := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(repoRoot, path)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}
