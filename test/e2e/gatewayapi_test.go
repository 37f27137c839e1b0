//go:build e2e

package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The Gateway API tests install the standard CRDs of the release the plugin
// is built against, and play the Gateway controller themselves: they write
// the Gateways' status.addresses and the routes' status.parents through the
// status subresource.

const gwapiController = "example.com/e2e-gateway-controller"

// gwapiSet is a set of Gateway API CRDs: a release of the sigs.k8s.io/
// gateway-api module (from the Go module proxy) and a channel.
type gwapiSet struct{ version, channel string }

var (
	gwapiMu      sync.Mutex
	gwapiCurrent gwapiSet // the set installed, once a test installed one
)

// gwapiModuleVersion is the gateway-api release the plugin is built with.
func gwapiModuleVersion(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// gwapiSetDir returns the CRD directory of a set, downloading the module
// release into the module cache when needed.
func gwapiSetDir(t *testing.T, set gwapiSet) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", "sigs.k8s.io/gateway-api@"+set.version)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download sigs.k8s.io/gateway-api@%s: %v\n%s", set.version, err, out)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download -json: %v\n%s", err, out)
	}
	dir := filepath.Join(mod.Dir, "config/crd", set.channel)
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// gwapiCRDDir returns the standard CRDs of the sigs.k8s.io/gateway-api module
// the plugin is built with.
func gwapiCRDDir(t *testing.T) string {
	t.Helper()
	return gwapiSetDir(t, gwapiSet{gwapiModuleVersion(t), "standard"})
}

// gwapiCRDFile returns the CRD manifest of one resource, e.g. "tlsroutes".
func gwapiCRDFile(t *testing.T, resource string) string {
	t.Helper()
	return filepath.Join(gwapiCRDDir(t), "gateway.networking.k8s.io_"+resource+".yaml")
}

// installGatewayAPI installs the standard CRDs of the release the plugin is
// built with (once per test binary unless force) and waits until they are
// established.
func installGatewayAPI(t *testing.T, force bool) {
	t.Helper()
	set := gwapiSet{gwapiModuleVersion(t), "standard"}
	if force {
		gwapiMu.Lock()
		gwapiCurrent = gwapiSet{}
		gwapiMu.Unlock()
	}
	useGatewayAPI(t, set)
}

// useGatewayAPI installs a set of Gateway API CRDs, unless it is the one
// installed. A set that is not newer than what the cluster has replaces it
// altogether (the objects of the CRDs are deleted with them); a newer one is
// applied over it, as a cluster is upgraded.
func useGatewayAPI(t *testing.T, set gwapiSet) {
	t.Helper()
	gwapiMu.Lock()
	defer gwapiMu.Unlock()
	if gwapiCurrent == set {
		return
	}
	// Unknown until this install succeeds: a test that fails half way
	// must not leave the next one believing its set is in place.
	gwapiCurrent = gwapiSet{}
	start := time.Now()
	dir := gwapiSetDir(t, set)
	installed, err := kubectlErr("", "get", "crd", "gateways.gateway.networking.k8s.io",
		"-o", `jsonpath={.metadata.annotations.gateway\.networking\.k8s\.io/bundle-version}`)
	if installed = strings.TrimSpace(installed); err != nil {
		installed = "none"
	}
	channel, _ := kubectlErr("", "get", "crd", "gateways.gateway.networking.k8s.io",
		"-o", `jsonpath={.metadata.annotations.gateway\.networking\.k8s\.io/channel}`)
	// An older set, or the experimental channel over the standard one,
	// which the standard set's safe-upgrades policy refuses: a clean install.
	if strings.HasPrefix(installed, "v") && (!semverLess(installed, set.version) && installed != set.version ||
		set.channel == "experimental" && strings.TrimSpace(channel) == "standard") {
		removeGatewayAPI(t)
	}
	files, err := filepath.Glob(filepath.Join(dir, "gateway.networking.*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Gateway API CRDs in %s: %v", dir, err)
	}
	// The CRDs in one go; the ValidatingAdmissionPolicy that guards them
	// against downgrades is optional (older API servers lack the API).
	var crds, args, vaps []string
	args = []string{"apply", "--server-side", "--force-conflicts"}
	for _, f := range files {
		group, resource, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".yaml"), "_")
		if strings.Contains(resource, "vap") {
			vaps = append(vaps, f)
			continue
		}
		args = append(args, "-f", f)
		crds = append(crds, "crd/"+resource+"."+group)
	}
	// After removeGatewayAPI, the API server's admission keeps enforcing
	// the deleted downgrade policy until its policy cache hears of the
	// deletion: an older set is refused for a moment ("Installing CRDs
	// with version before v1.5.0 is prohibited").
	kubectlRetry(t, 30*time.Second, "", args...)
	for _, f := range vaps {
		if out, err := kubectlErr("", "apply", "--server-side", "--force-conflicts", "-f", f); err != nil {
			t.Logf("skipping %s: %v\n%s", filepath.Base(f), err, out)
		}
	}
	waitEstablished(t, crds...)
	gwapiCurrent = set
	t.Logf("Gateway API CRDs %s %s established in %s (before: %q)", set.version, set.channel, time.Since(start).Round(time.Millisecond), installed)
}

// removeGatewayAPI deletes every Gateway API CRD, and the policy that
// forbids installing older ones.
func removeGatewayAPI(t *testing.T) {
	t.Helper()
	kubectlErr("", "delete", "validatingadmissionpolicybinding,validatingadmissionpolicy",
		"safe-upgrades.gateway.networking.k8s.io", "--ignore-not-found")
	out := kubectl(t, "", "get", "crd", "-o", "name")
	var crds []string
	for _, name := range strings.Fields(out) {
		if strings.HasSuffix(name, ".gateway.networking.k8s.io") || strings.HasSuffix(name, ".gateway.networking.x-k8s.io") {
			crds = append(crds, name)
		}
	}
	if len(crds) > 0 {
		kubectl(t, "", append([]string{"delete", "--wait=true", "--timeout=120s"}, crds...)...)
	}
}

// semverLess compares two release versions vX.Y.Z.
func semverLess(a, b string) bool {
	parse := func(v string) [3]int {
		var n [3]int
		fmt.Sscanf(strings.TrimPrefix(v, "v"), "%d.%d.%d", &n[0], &n[1], &n[2])
		return n
	}
	pa, pb := parse(a), parse(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

// gatewayClass creates a GatewayClass and deletes it when the test ends.
func gatewayClass(t *testing.T, name string) {
	t.Helper()
	kubectl(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: %s}
spec: {controllerName: %s}
`, name, gwapiController), "apply", "-f", "-")
	t.Cleanup(func() { kubectlErr("", "delete", "gatewayclass", name, "--ignore-not-found", "--wait=false") })
}

// setGatewayAddresses writes a Gateway's status.addresses: IPs as IPAddress,
// anything else as Hostname.
func setGatewayAddresses(t *testing.T, ns, name string, addrs ...string) {
	t.Helper()
	type address struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	}
	list := []address{}
	for _, a := range addrs {
		typ := "Hostname"
		if net.ParseIP(a) != nil {
			typ = "IPAddress"
		}
		list = append(list, address{typ, a})
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"addresses": list}})
	kubectl(t, "", "-n", ns, "patch", "gateways.gateway.networking.k8s.io", name, "--subresource=status", "--type=merge", "-p", string(patch))
}

// gwapiParent is one entry of a route's status.parents: the parentRef (name,
// and sectionName when not empty) with Accepted set to accepted.
type gwapiParent struct {
	gateway, section, namespace string
	accepted                    string // "True", "False"
	kind                        string // "" for Gateway
}

// kindGroup is the kind and the API group of the parent.
func (p gwapiParent) kindGroup() (kind, group string) {
	kind = cmp.Or(p.kind, "Gateway")
	if kind == "XListenerSet" {
		return kind, "gateway.networking.x-k8s.io"
	}
	return kind, "gateway.networking.k8s.io"
}

// setRouteStatus writes a route's status.parents, as a Gateway controller would.
func setRouteStatus(t *testing.T, ns, resource, name string, parents ...gwapiParent) {
	t.Helper()
	now := time.Now().UTC().Format(time.RFC3339)
	var list []map[string]any
	for _, p := range parents {
		kind, group := p.kindGroup()
		ref := map[string]any{"group": group, "kind": kind, "name": p.gateway}
		if p.section != "" {
			ref["sectionName"] = p.section
		}
		if p.namespace != "" {
			ref["namespace"] = p.namespace
		}
		reason := "Accepted"
		if p.accepted != "True" {
			reason = "NotAllowedByListeners"
		}
		list = append(list, map[string]any{
			"parentRef":      ref,
			"controllerName": gwapiController,
			"conditions": []map[string]any{{
				"type": "Accepted", "status": p.accepted, "reason": reason, "message": "set by the e2e test",
				"lastTransitionTime": now, "observedGeneration": 1,
			}},
		})
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"parents": list}})
	kubectl(t, "", "-n", ns, "patch", resource+".gateway.networking.k8s.io", name, "--subresource=status", "--type=merge", "-p", string(patch))
}

// kubectlRetry runs kubectl until it succeeds or timeout passes (for objects
// of a CRD that kubectl's discovery may not know yet).
func kubectlRetry(t *testing.T, timeout time.Duration, stdin string, args ...string) string {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for attempt := 1; ; attempt++ {
		out, err := kubectlErr(stdin, args...)
		if err == nil {
			if attempt > 1 {
				t.Logf("kubectl %s succeeded after %d attempts, %s", args[0], attempt, time.Since(start).Round(time.Millisecond))
			}
			return out
		}
		if attempt == 1 {
			t.Logf("kubectl %s: %v: %s; retrying", args[0], err, strings.TrimSpace(out))
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// gwapiA is the expected A answer of name.
func gwapiA(name string, ips ...string) expectation {
	var rrs []string
	for _, ip := range ips {
		rrs = append(rrs, name+" 30 IN A "+ip)
	}
	return positive(rrs...)
}

// TestGatewayAPIRoutes publishes every route kind through one Gateway and
// follows a change of the Gateway's address to every route.
func TestGatewayAPIRoutes(t *testing.T) {
	installGatewayAPI(t, false)
	s := startServer(t, "test/e2e/testdata/Corefile", kubeconfig)
	ns := namespace(t)
	gatewayClass(t, ns)
	kubectl(t, manifests(
		gateway{namespace: ns, name: "gw", class: ns, listeners: []listener{
			{"http", "HTTP", 80, "*.gw." + ns + ".example.com", "allowedRoutes: {namespaces: {from: All}}"},
			{"tls", "TLS", 443, "tls." + ns + ".example.com", passthrough},
			{"tcp", "TCP", 5432, "", ""},
		}},
		route{kind: "HTTPRoute", namespace: ns, name: "pending", parent: gwapiParent{gateway: "gw", section: "http"},
			hostnames: []string{"pending.gw." + ns + ".example.com"}, backend: "web", port: 80},
		route{kind: "HTTPRoute", namespace: ns, name: "unclaimed", parent: gwapiParent{gateway: "gw"},
			hostnames: []string{"unclaimed.gw." + ns + ".example.com"}, backend: "web", port: 80},
		route{kind: "HTTPRoute", namespace: ns, name: "web", parent: gwapiParent{gateway: "gw", section: "http"},
			hostnames: []string{"app.gw." + ns + ".example.com", "outside.example.org"}, backend: "web", port: 80},
		route{kind: "GRPCRoute", namespace: ns, name: "grpc", parent: gwapiParent{gateway: "gw", section: "http"},
			hostnames: []string{"grpc.gw." + ns + ".example.com"}, backend: "grpc", port: 9000},
		route{kind: "TLSRoute", namespace: ns, name: "tls", parent: gwapiParent{gateway: "gw", section: "tls"},
			hostnames: []string{"*." + ns + ".example.com"}, backend: "tls", port: 443},
		route{kind: "TCPRoute", namespace: ns, name: "db", annotation: "db." + ns + ".example.com",
			parent: gwapiParent{gateway: "gw", section: "tcp"}, backend: "db", port: 5432},
	), "apply", "-f", "-")

	// allowedRoutes All: a route from another namespace attaches to the http listener.
	other := namespace(t)
	kubectl(t, manifests(route{kind: "HTTPRoute", namespace: other, name: "xns",
		parent:    gwapiParent{gateway: "gw", namespace: ns, section: "http"},
		hostnames: []string{"xns.gw." + ns + ".example.com"}, backend: "web", port: 80,
	}), "apply", "-f", "-")
	setRouteStatus(t, other, "httproutes", "xns", gwapiParent{gateway: "gw", namespace: ns, section: "http", accepted: "True"})
	xns := "xns.gw." + ns + ".example.com."

	app := "app.gw." + ns + ".example.com."
	grpc := "grpc.gw." + ns + ".example.com."
	tls := "tls." + ns + ".example.com." // the TLSRoute's wildcard narrowed to the listener's name
	db := "db." + ns + ".example.com."
	pending := "pending.gw." + ns + ".example.com."
	unclaimed := "unclaimed.gw." + ns + ".example.com."

	// Accepted routes of a Gateway without addresses publish nothing.
	setRouteStatus(t, ns, "httproutes", "web", gwapiParent{gateway: "gw", section: "http", accepted: "True"})
	s.eventually(t, 5*time.Second, app, dns.TypeA, nxdomain)

	setRouteStatus(t, ns, "httproutes", "pending", gwapiParent{gateway: "gw", section: "http", accepted: "False"})
	setRouteStatus(t, ns, "grpcroutes", "grpc", gwapiParent{gateway: "gw", section: "http", accepted: "True"})
	setRouteStatus(t, ns, "tlsroutes", "tls", gwapiParent{gateway: "gw", section: "tls", accepted: "True"})
	setRouteStatus(t, ns, "tcproutes", "db", gwapiParent{gateway: "gw", section: "tcp", accepted: "True"})
	start := time.Now()
	setGatewayAddresses(t, ns, "gw", "192.0.2.80")
	for _, name := range []string{app, grpc, tls, db, xns} {
		s.eventually(t, 5*time.Second, name, dns.TypeA, gwapiA(name, "192.0.2.80"))
	}
	t.Logf("Gateway address → every route answers: %s", time.Since(start).Round(time.Millisecond))
	s.eventually(t, time.Second, app, dns.TypeAAAA, nodata)
	// Not accepted (status False, or no status at all): nothing.
	s.eventually(t, time.Second, pending, dns.TypeA, nxdomain)
	s.eventually(t, time.Second, unclaimed, dns.TypeA, nxdomain)
	// Listener hostnames alone publish nothing, nor does the TLSRoute's wildcard beyond the listener.
	s.eventually(t, time.Second, "other.gw."+ns+".example.com.", dns.TypeA, nxdomain)
	s.eventually(t, time.Second, "x."+ns+".example.com.", dns.TypeA, nxdomain)

	// The Gateway's new addresses reach every route.
	start = time.Now()
	setGatewayAddresses(t, ns, "gw", "192.0.2.81", "2001:db8::81")
	var lat []string
	for _, name := range []string{app, grpc, tls, db} {
		s.eventually(t, 5*time.Second, name, dns.TypeA, gwapiA(name, "192.0.2.81"))
		lat = append(lat, fmt.Sprintf("%s %s", strings.SplitN(name, ".", 2)[0], time.Since(start).Round(time.Millisecond)))
	}
	t.Logf("address change → answers (cumulative): %s", strings.Join(lat, ", "))
	for _, name := range []string{app, grpc, tls, db} {
		s.eventually(t, time.Second, name, dns.TypeAAAA, positive(name+" 30 IN AAAA 2001:db8::81"))
	}

	// Without addresses there is nothing to point at.
	setGatewayAddresses(t, ns, "gw")
	for _, name := range []string{app, grpc, tls, db, xns} {
		s.eventually(t, 5*time.Second, name, dns.TypeA, nxdomain)
	}

	// A Hostname address is a CNAME.
	lb := "lb-" + ns + ".elb.example.net."
	setGatewayAddresses(t, ns, "gw", strings.TrimSuffix(lb, "."))
	for _, name := range []string{app, grpc, tls, db} {
		s.eventually(t, 5*time.Second, name, dns.TypeA, positive(name+" 30 IN CNAME "+lb))
	}
	setGatewayAddresses(t, ns, "gw", "192.0.2.82")
	s.eventually(t, 5*time.Second, app, dns.TypeA, gwapiA(app, "192.0.2.82"))

	// Accepted later: the pending route appears; withdrawn: the web route goes.
	setRouteStatus(t, ns, "httproutes", "pending", gwapiParent{gateway: "gw", section: "http", accepted: "True"})
	d := s.eventually(t, 5*time.Second, pending, dns.TypeA, gwapiA(pending, "192.0.2.82"))
	t.Logf("route accepted → answer: %s", d)
	setRouteStatus(t, ns, "httproutes", "web", gwapiParent{gateway: "gw", section: "http", accepted: "False"})
	s.eventually(t, 5*time.Second, app, dns.TypeA, nxdomain)

	// A route without hostnames takes the listener's wildcard.
	kubectl(t, manifests(route{kind: "HTTPRoute", namespace: ns, name: "catchall",
		parent: gwapiParent{gateway: "gw", section: "http"}, backend: "web", port: 80,
	}), "apply", "-f", "-")
	setRouteStatus(t, ns, "httproutes", "catchall", gwapiParent{gateway: "gw", section: "http", accepted: "True"})
	wild := "anything.gw." + ns + ".example.com."
	s.eventually(t, 5*time.Second, wild, dns.TypeA, gwapiA(wild, "192.0.2.82"))

	// Deleting the Gateway withdraws every route.
	start = time.Now()
	kubectl(t, "", "-n", ns, "delete", "gateways.gateway.networking.k8s.io", "gw")
	for _, name := range []string{pending, grpc, tls, db, wild} {
		s.eventually(t, 5*time.Second, name, dns.TypeA, nxdomain)
	}
	t.Logf("Gateway deleted → every route gone: %s", time.Since(start).Round(time.Millisecond))
}

// TestGatewayAPINamespaceSelector: a listener that admits routes from labelled
// namespaces publishes a route once its namespace gets the label.
func TestGatewayAPINamespaceSelector(t *testing.T) {
	installGatewayAPI(t, false)
	s := startServer(t, "test/e2e/testdata/Corefile", kubeconfig)
	gwNS, appNS := namespace(t), namespace(t)
	gatewayClass(t, gwNS)
	label := "e2e.example.com/expose-" + gwNS
	kubectl(t, manifests(
		gateway{namespace: gwNS, name: "shared", class: gwNS, listeners: []listener{
			{"http", "HTTP", 80, "", fmt.Sprintf(`allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {%s: "yes"}}}}`, label)},
		}},
		route{kind: "HTTPRoute", namespace: appNS, name: "app", parent: gwapiParent{gateway: "shared", namespace: gwNS},
			hostnames: []string{"app." + appNS + ".example.com"}, backend: "app", port: 80},
	), "apply", "-f", "-")
	setGatewayAddresses(t, gwNS, "shared", "192.0.2.90")
	setRouteStatus(t, appNS, "httproutes", "app", gwapiParent{gateway: "shared", namespace: gwNS, accepted: "True"})
	name := "app." + appNS + ".example.com."
	// Accepted says the status, but the listener does not admit the namespace yet.
	s.eventually(t, 5*time.Second, name, dns.TypeA, nxdomain)
	time.Sleep(500 * time.Millisecond)
	s.eventually(t, time.Second, name, dns.TypeA, nxdomain)

	start := time.Now()
	kubectl(t, "", "label", "namespace", appNS, label+"=yes")
	s.eventually(t, 5*time.Second, name, dns.TypeA, gwapiA(name, "192.0.2.90"))
	t.Logf("namespace labelled → answer: %s", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	kubectl(t, "", "label", "namespace", appNS, label+"=no", "--overwrite")
	s.eventually(t, 5*time.Second, name, dns.TypeA, nxdomain)
	t.Logf("namespace label changed → NXDOMAIN: %s", time.Since(start).Round(time.Millisecond))
}

// TestGatewayAPICRDAtRuntime: a route kind whose CRD is missing when the
// plugin starts is disabled, the others work, and once the CRD is installed
// the kind is picked up without a restart.
func TestGatewayAPICRDAtRuntime(t *testing.T) {
	installGatewayAPI(t, false)
	crd := "crd/tlsroutes.gateway.networking.k8s.io"
	file := gwapiCRDFile(t, "tlsroutes")
	// Whatever happens, leave the CRD installed for the other tests.
	t.Cleanup(func() {
		if out, err := kubectlErr("", "apply", "--server-side", "--force-conflicts", "-f", file); err != nil {
			t.Errorf("reinstalling the TLSRoute CRD: %v\n%s", err, out)
			return
		}
		waitEstablishedErr(crd)
	})
	start := time.Now()
	kubectl(t, "", "delete", crd, "--wait=true", "--timeout=60s")
	kubectl(t, "", "wait", "--for=delete", "--timeout=60s", crd)
	// The API server may serve the kind for a moment after the CRD is gone.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := kubectlErr("", "get", "--raw", "/apis/gateway.networking.k8s.io/v1/tlsroutes")
		if err != nil && (strings.Contains(out, "NotFound") || strings.Contains(out, "not found")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tlsroutes still served 30s after the CRD was deleted: %v %s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("TLSRoute CRD deleted in %s", time.Since(start).Round(time.Millisecond))

	s := startServer(t, "test/e2e/testdata/Corefile", kubeconfig)
	ns := namespace(t)
	gatewayClass(t, ns)
	if out := s.output(); !strings.Contains(out, "TLSRoute disabled") {
		t.Fatalf("the plugin did not log that TLSRoute is disabled:\n%s", out)
	}
	for _, k := range []string{"HTTPRoute", "GRPCRoute", "TCPRoute", "UDPRoute", "Gateway"} {
		if strings.Contains(s.output(), k+" disabled") {
			t.Errorf("%s disabled although its CRD is installed", k)
		}
	}
	kubectl(t, manifests(
		gateway{namespace: ns, name: "gw", class: ns, listeners: []listener{
			{"http", "HTTP", 80, "", ""},
			{"tls", "TLS", 443, "", passthrough},
		}},
		route{kind: "HTTPRoute", namespace: ns, name: "web", parent: gwapiParent{gateway: "gw", section: "http"},
			hostnames: []string{"web." + ns + ".example.com"}, backend: "web", port: 80},
	), "apply", "-f", "-")
	setGatewayAddresses(t, ns, "gw", "192.0.2.100")
	setRouteStatus(t, ns, "httproutes", "web", gwapiParent{gateway: "gw", section: "http", accepted: "True"})
	web := "web." + ns + ".example.com."
	s.eventually(t, 5*time.Second, web, dns.TypeA, gwapiA(web, "192.0.2.100"))

	// Install the CRD; the controller re-probes disabled kinds every 10 s.
	start = time.Now()
	kubectl(t, "", "apply", "--server-side", "--force-conflicts", "-f", file)
	waitEstablished(t, crd)
	established := time.Since(start)
	kubectlRetry(t, 30*time.Second, manifests(route{kind: "TLSRoute", namespace: ns, name: "tls",
		parent:    gwapiParent{gateway: "gw", section: "tls"},
		hostnames: []string{"tls." + ns + ".example.com"}, backend: "tls", port: 443,
	}), "apply", "-f", "-")
	setRouteStatus(t, ns, "tlsroutes", "tls", gwapiParent{gateway: "gw", section: "tls", accepted: "True"})
	created := time.Since(start)
	tls := "tls." + ns + ".example.com."
	s.eventually(t, 35*time.Second, tls, dns.TypeA, gwapiA(tls, "192.0.2.100"))
	t.Logf("TLSRoute CRD installed → established %s, route created %s, answer %s",
		established.Round(time.Millisecond), created.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if !strings.Contains(s.output(), "TLSRoute enabled") {
		t.Errorf("the plugin did not log that TLSRoute is enabled")
	}
	s.eventually(t, time.Second, web, dns.TypeA, gwapiA(web, "192.0.2.100"))

	// The re-enabled informer follows changes like the others.
	setGatewayAddresses(t, ns, "gw", "192.0.2.101")
	s.eventually(t, 5*time.Second, tls, dns.TypeA, gwapiA(tls, "192.0.2.101"))
}
