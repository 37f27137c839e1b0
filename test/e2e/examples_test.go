//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
)

// The recipes of examples/ run:
//
//   - TestExampleRecipes: each examples/Corefile* runs against the test
//     cluster, made local (localRecipe), and answers a Service's name.
//   - TestExampleValues: each examples/values-*.yaml passes helm lint
//     --strict and helm template (the chart's values.schema.json), the API
//     server takes the manifest (dry run), and its Corefile runs and answers.

// recipeAddress is the load balancer address of the recipes' Service.
const recipeAddress = "198.51.100.77"

// localRecipe writes a copy of a production-shaped Corefile that runs on
// loopback and returns its path relative to the repository:
//
//   - a server block's port 53 (or 1053, the chart's) is $K8S_GATEWAY_PORT,
//     bound to 127.0.0.1; ready, health and prometheus listen on 127.0.0.1,
//     and health's lameduck is short;
//   - transfer's `to` and the updates listener are ports of 127.0.0.1 (no
//     NOTIFY leaves the machine);
//   - every kubeconfig is the test cluster's, and a k8s_gateway block without
//     cluster blocks gets it;
//   - a DNSSEC key is one of the test's own, files under /etc/coredns/ and
//     /etc/k8s-gateway/ are made in a temporary directory: a TSIG secret, or a
//     zone file for a file plugin.
func localRecipe(t *testing.T, corefile string) string {
	t.Helper()
	dir := t.TempDir()
	fleet := strings.Contains(corefile, "\n        cluster ")
	promPort, healthPort := freePort(t), freePort(t)
	var out []string
	for _, line := range strings.Split(corefile, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(trimmed)]
		f := strings.Fields(trimmed)
		block := ""
		if strings.HasSuffix(trimmed, "{") {
			block = " {"
		}
		switch {
		case len(f) == 0 || strings.HasPrefix(trimmed, "#"):
		case indent == "" && block != "":
			for _, port := range []string{":53 ", ":53{", ":1053 "} {
				line = strings.ReplaceAll(line, port, ":{$K8S_GATEWAY_PORT}"+port[len(port)-1:])
			}
			out = append(out, line, "    bind 127.0.0.1")
			continue
		case f[0] == "ready":
			line = indent + "ready 127.0.0.1:{$K8S_GATEWAY_READY_PORT}"
		case f[0] == "health" && len(indent) <= 4:
			line = indent + "health 127.0.0.1:" + strconv.Itoa(healthPort) + block
		case f[0] == "lameduck":
			line = indent + "lameduck 100ms" // the test stops the server at once
		case f[0] == "prometheus":
			line = indent + "prometheus 127.0.0.1:" + strconv.Itoa(promPort)
		case f[0] == "to":
			line = indent + "to 127.0.0.1:" + strconv.Itoa(freePort(t))
		case f[0] == "listen":
			line = indent + "listen 127.0.0.1:" + strconv.Itoa(freePort(t))
		case f[0] == "key" && len(f) == 3 && f[1] == "file":
			key, _ := dnssecKey(t, dir)
			line = indent + "key file " + key
		case f[0] == "kubeconfig":
			line = indent + "kubeconfig {$KUBECONFIG}"
		case f[0] == "k8s_gateway" && block != "" && !fleet:
			out = append(out, line, indent+"    kubeconfig {$KUBECONFIG}")
			continue
		}
		for i, tok := range strings.Fields(line) {
			if !strings.HasPrefix(tok, "/etc/coredns/") && !strings.HasPrefix(tok, "/etc/k8s-gateway/") {
				continue
			}
			path := filepath.Join(dir, filepath.Base(tok))
			content := "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\n" // a TSIG secret
			if fs := strings.Fields(line); fs[0] == "file" && i+1 < len(fs) {
				content = fmt.Sprintf("$ORIGIN %[1]s.\n@ 300 IN SOA ns.%[1]s. hostmaster.%[1]s. 1 300 60 604800 60\n@ 300 IN NS ns.%[1]s.\nns 300 IN A 192.0.2.1\n", fs[i+1])
			}
			writeFile(t, path, content)
			line = strings.Replace(line, tok, path, 1)
		}
		out = append(out, line)
	}
	path := filepath.Join(dir, "Corefile")
	writeFile(t, path, strings.Join(out, "\n")+"\n")
	rel, err := filepath.Rel(repoRoot, path)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// recipeService makes a LoadBalancer Service web with recipeAddress in a
// namespace of the test's own, and returns the namespace.
func recipeService(t *testing.T) string {
	t.Helper()
	ns := namespace(t)
	kubectl(t, fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: %s}\nspec: {type: LoadBalancer, ports: [{port: 80}]}\n", ns), "apply", "-f", "-")
	setLBStatus(t, ns, "service", "web", recipeAddress)
	return ns
}

// answersService waits until the server answers web.NS.ZONE authoritatively
// with recipeAddress, and the zone's SOA and NS.
func answersService(t *testing.T, s *server, ns, zone string) {
	t.Helper()
	name := "web." + ns + "." + dns.Fqdn(zone)
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := s.query(name, dns.TypeA)
		if err == nil && r.Rcode == "NOERROR" && r.AA && len(r.Answer) == 1 {
			if f := strings.Fields(r.Answer[0]); len(f) == 5 && f[0] == name && f[2] == "IN" && f[3] == "A" && f[4] == recipeAddress {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s A: %+v, %v; want %s", name, r, err, recipeAddress)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, qtype := range []uint16{dns.TypeSOA, dns.TypeNS} {
		r, err := s.query(zone, qtype)
		if err != nil || r.Rcode != "NOERROR" || !r.AA || len(r.Answer) == 0 {
			t.Errorf("%s %s: %+v, %v; want an authoritative answer", zone, dns.TypeToString[qtype], r, err)
		}
	}
}

func TestExampleRecipes(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "Corefile*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples/Corefile*: %v", err)
	}
	chartEnsureCRDs(t, []string{"dnsendpoints.externaldns.k8s.io"}, false, filepath.Join(repoRoot, "test/e2e/testdata/dnsendpoint-crd.yaml"))
	nameserverServices(t)
	ns := recipeService(t)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			local := localRecipe(t, string(b))
			s := startServer(t, local, kubeconfig)
			zones := gatewayZones(t, filepath.Join(repoRoot, local))
			answersService(t, s, ns, zones[0])
		})
	}
}

func TestExampleValues(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "values-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples/values-*.yaml: %v", err)
	}
	chartHelm(t)
	chartEnsureCRDs(t, []string{"dnsendpoints.externaldns.k8s.io"}, false, filepath.Join(repoRoot, "test/e2e/testdata/dnsendpoint-crd.yaml"))
	nameserverServices(t)
	svcNS := recipeService(t)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			ns := namespace(t)
			out := chartHelmOut(t, "lint", "--strict", chartDir, "--namespace", ns, "-f", file)
			if !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") {
				t.Errorf("helm lint --strict:\n%s", out)
			}
			m := parseChartManifest(t, chartHelmOut(t, "template", "k8s-gateway", chartDir, "--namespace", ns, "-f", file))
			ensureNamespaces(t, m, ns)
			chartApplyDryRun(t, m.text)
			cm := chartGet[corev1.ConfigMap](t, m, "ConfigMap", "")
			local := localRecipe(t, cm.Data["Corefile"])
			s := startServer(t, local, kubeconfig)
			zones := gatewayZones(t, filepath.Join(repoRoot, local))
			answersService(t, s, svcNS, zones[0])
		})
	}
}

// ensureNamespaces makes the namespaces other than ns that the manifest's
// objects are in (the tenants' of a values file), and deletes those it made
// when the test ends.
func ensureNamespaces(t *testing.T, m chartManifest, ns string) {
	t.Helper()
	seen := map[string]bool{ns: true, "": true}
	for _, o := range m.objs {
		if seen[o.Namespace] {
			continue
		}
		seen[o.Namespace] = true
		if _, err := kubectlErr("", "get", "namespace", o.Namespace); err == nil {
			continue
		}
		kubectl(t, "", "create", "namespace", o.Namespace)
		name := o.Namespace
		t.Cleanup(func() { kubectlErr("", "delete", "namespace", name, "--wait=false") })
	}
}
