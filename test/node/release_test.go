//go:build e2e

package node

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRelease runs `make release` against a real OCI registry on loopback
// (Debian's docker-registry), checks what it pushed and wrote, and installs
// it as a user would: helm install oci://... with the node's containerd
// pulling the image from that registry.
func TestRelease(t *testing.T) {
	needNode(t)
	registry := startRegistry(t)
	version := chartField(t, "appVersion")
	chartVersion := strings.TrimPrefix(version, "v")
	dest := registry + "/k8sgw"
	dist := t.TempDir()

	// The project's base, pushed once, then referenced by digest.
	start := time.Now()
	base := strings.TrimSpace(makeOut(t, "release-base", "REGISTRY="+dest))
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(dest) + `/k8s-gateway-base@sha256:[0-9a-f]{64}$`).MatchString(base) {
		t.Fatalf("make release-base printed %q, want %s/k8s-gateway-base@sha256:...", base, dest)
	}
	t.Logf("make release-base: %s", time.Since(start).Round(100*time.Millisecond))
	// Its bytes depend only on the sources and the commit's time: pushed again, the same digest.
	if again := strings.TrimSpace(makeOut(t, "release-base", "REGISTRY="+dest)); again != base {
		t.Fatalf("make release-base again: %s, first %s", again, base)
	}
	start = time.Now()
	makeOut(t, "release", "VERSION="+version, "REGISTRY="+dest, "BASE_IMAGE="+base, "DIST="+dist)
	t.Logf("make release %s: %s", version, time.Since(start).Round(100*time.Millisecond))

	revision := strings.TrimSpace(command(t, "git", "-C", repoRoot, "rev-parse", "HEAD"))
	labels := map[string]string{
		"org.opencontainers.image.source":   "https://github.com/seed-e581d630/k8s_gateway",
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.revision": revision,
	}
	indexDigest := checkImage(t, registry, "k8sgw/k8s_gateway", version, base, dist, labels)
	if b, _ := os.ReadFile(filepath.Join(dist, "image.txt")); strings.TrimSpace(string(b)) != dest+"/k8s_gateway@"+indexDigest {
		t.Errorf("dist/image.txt = %q, want %s/k8s_gateway@%s", b, dest, indexDigest)
	}
	checkDist(t, dist, version, chartVersion)

	// The chart, as helm pulls it from the registry: the release's versions,
	// and its default image the one just pushed (the tag is appVersion's).
	chartRef := "oci://" + dest + "/charts/k8s-gateway"
	pulled := t.TempDir()
	helm(t, "pull", chartRef, "--version", chartVersion, "--plain-http", "-d", pulled)
	if a, b := fileSum(t, filepath.Join(pulled, "k8s-gateway-"+chartVersion+".tgz")), fileSum(t, filepath.Join(dist, "k8s-gateway-"+chartVersion+".tgz")); a != b {
		t.Errorf("the chart helm pulled (%s) is not the one in dist (%s)", a, b)
	}
	meta := helmOut(t, "show", "chart", chartRef, "--version", chartVersion, "--plain-http")
	for _, want := range []string{"version: " + chartVersion, "appVersion: " + version, "name: k8s-gateway"} {
		if !slices.Contains(strings.Split(meta, "\n"), want) {
			t.Errorf("helm show chart: no line %q in\n%s", want, meta)
		}
	}
	values := helmOut(t, "show", "values", chartRef, "--version", chartVersion, "--plain-http")
	for _, want := range []string{"  registry: " + registry, "  repository: k8sgw/k8s_gateway", `  tag: ""`} {
		if !slices.Contains(strings.Split(values, "\n"), want) {
			t.Errorf("helm show values: no line %q", want)
		}
	}

	// containerd pulls from the loopback registry in plain HTTP, as its
	// hosts.toml says (hack/node.sh points config_path at certs.d).
	certs := filepath.Join(nodeDir, "containerd", "certs.d")
	if b, err := os.ReadFile(filepath.Join(nodeDir, "containerd", "config.toml")); err != nil || !bytes.Contains(b, []byte(certs)) {
		t.Fatalf("the node's containerd has no config_path %s (a node started before hack/node.sh set it? stop it): %v", certs, err)
	}
	hosts := filepath.Join(certs, registry)
	if err := os.MkdirAll(hosts, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(hosts) })
	if err := os.WriteFile(filepath.Join(hosts, "hosts.toml"), []byte(fmt.Sprintf(
		"server = \"http://%s\"\n\n[host.\"http://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", registry, registry)), 0o644); err != nil {
		t.Fatal(err)
	}

	const ns, release = "kube-system", "rel"
	start = time.Now()
	helm(t, "install", release, chartRef, "--version", chartVersion, "--plain-http", "--namespace", ns,
		"--set", "domain=example.com", "--set", "service.type=NodePort", "--set", "replicaCount=1",
		"--wait", "--timeout", "180s")
	t.Cleanup(func() { helmErr("uninstall", release, "--namespace", ns, "--wait") })
	t.Logf("helm install %s --version %s (image pulled by containerd) → Ready: %s", chartRef, chartVersion, time.Since(start).Round(100*time.Millisecond))
	pod := onePod(t, ns, "app.kubernetes.io/instance="+release)
	image := kubectl(t, "", "-n", ns, "get", "pod", pod, "-o", "jsonpath={.spec.containers[0].image} {.status.containerStatuses[0].imageID}")
	if want := fmt.Sprintf("%s/k8s_gateway:%s %s/k8s_gateway@%s", dest, version, dest, indexDigest); image != want {
		t.Fatalf("pod %s runs %q, want %q (the released index)", pod, image, want)
	}
	test := appNamespace(t)
	name := "rel." + test + ".example.com"
	ingress(t, test, "rel", name, "192.0.2.60")
	d := eventually(t, 30*time.Second, podIP(t, ns, pod), "1053", name, "60 IN A 192.0.2.60")
	t.Logf("the released image answers at the pod IP after %s", d)
	nodePort := kubectl(t, "", "-n", ns, "get", "service", release+"-k8s-gateway", "-o",
		`jsonpath={.spec.ports[?(@.protocol=="UDP")].nodePort}`)
	eventually(t, 30*time.Second, nodeAddr, nodePort, name, "60 IN A 192.0.2.60")
}

// checkImage checks the released index and each platform's image: OCI media
// types, both platforms, the labels and annotations, the Dockerfile's user,
// entrypoint and ports, the base's layers, and the binary of dist as
// /coredns. It returns the index's digest.
func checkImage(t *testing.T, registry, repo, tag, base, dist string, labels map[string]string) string {
	t.Helper()
	var idx ociIndexJSON
	digest := registryJSON(t, registry, repo, "manifests", tag, ociIndex, &idx)
	if idx.SchemaVersion != 2 || idx.MediaType != ociIndex {
		t.Errorf("index: schemaVersion %d, mediaType %q", idx.SchemaVersion, idx.MediaType)
	}
	checkLabels(t, "index annotations", idx.Annotations, labels)
	var baseIdx ociIndexJSON
	baseName, baseDigest, _ := strings.Cut(base, "@")
	registryJSON(t, registry, strings.TrimPrefix(baseName, registry+"/"), "manifests", baseDigest, ociIndex, &baseIdx)
	var platforms []string
	for _, m := range idx.Manifests {
		if m.Platform == nil || m.MediaType != ociManifest {
			t.Fatalf("index entry %s: mediaType %q, platform %v", m.Digest, m.MediaType, m.Platform)
		}
		plat := m.Platform.OS + "/" + m.Platform.Architecture
		platforms = append(platforms, plat)
		var man ociManifestJSON
		registryJSON(t, registry, repo, "manifests", m.Digest, ociManifest, &man)
		checkLabels(t, plat+" manifest annotations", man.Annotations, labels)
		var cfg ociConfigJSON
		if man.Config.MediaType != ociConfig {
			t.Errorf("%s: config mediaType %q", plat, man.Config.MediaType)
		}
		registryJSON(t, registry, repo, "blobs", man.Config.Digest, "", &cfg)
		checkLabels(t, plat+" config labels", cfg.Config.Labels, labels)
		got := fmt.Sprintf("%s/%s user=%s entrypoint=%q cmd=%q", cfg.OS, cfg.Architecture, cfg.Config.User, cfg.Config.Entrypoint, cfg.Config.Cmd)
		if want := plat + ` user=65532:65532 entrypoint=["/coredns"] cmd=[]`; got != want {
			t.Errorf("%s config: %s, want %s", plat, got, want)
		}
		if _, udp := cfg.Config.ExposedPorts["1053/udp"]; !udp || len(cfg.Config.ExposedPorts) != 2 {
			t.Errorf("%s: exposed ports %v, want 1053/udp and 1053/tcp", plat, cfg.Config.ExposedPorts)
		}
		// On the base this platform's entry of the pinned base names.
		var baseMan ociManifestJSON
		for _, b := range baseIdx.Manifests {
			if b.Platform != nil && b.Platform.OS+"/"+b.Platform.Architecture == plat {
				registryJSON(t, registry, strings.TrimPrefix(baseName, registry+"/"), "manifests", b.Digest, ociManifest, &baseMan)
				if man.Annotations["org.opencontainers.image.base.digest"] != b.Digest {
					t.Errorf("%s: base.digest annotation %q, want %s", plat, man.Annotations["org.opencontainers.image.base.digest"], b.Digest)
				}
			}
		}
		if n := len(baseMan.Layers); n == 0 || len(man.Layers) != n+1 || man.Layers[0].Digest != baseMan.Layers[0].Digest {
			t.Fatalf("%s: layers %v do not extend the base's %v by one", plat, man.Layers, baseMan.Layers)
		}
		// The last layer is the released binary, built for this platform.
		blob, _, _ := registryGet(t, registry, repo, "blobs", man.Layers[len(man.Layers)-1].Digest, "")
		files := layerFiles(t, blob)
		bin, ok := files["coredns"]
		if !ok || len(files) != 1 || bin.mode != 0o755 {
			t.Fatalf("%s: the binary layer holds %d files, coredns mode %o", plat, len(files), bin.mode)
		}
		released, err := os.ReadFile(filepath.Join(dist, "coredns-"+strings.ReplaceAll(plat, "/", "-")))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bin.data, released) {
			t.Errorf("%s: /coredns in the image is not dist's binary", plat)
		}
		f, err := elf.NewFile(bytes.NewReader(bin.data))
		if err != nil {
			t.Fatalf("%s: /coredns: %v", plat, err)
		}
		if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[m.Platform.Architecture]; f.Machine != want {
			t.Errorf("%s: /coredns is built for %s", plat, f.Machine)
		}
	}
	slices.Sort(platforms)
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Fatalf("index platforms %v, want linux/amd64 and linux/arm64", platforms)
	}
	return digest
}

func checkLabels(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got[k], v)
		}
	}
}

// checkDist checks the release directory: SHA256SUMS verifies and lists
// the binaries, their SBOMs and the chart; each SBOM is CycloneDX and names
// the plugin's module and its dependencies.
func checkDist(t *testing.T, dist, version, chartVersion string) {
	t.Helper()
	cmd := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	cmd.Dir = dist
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sha256sum --check: %v\n%s", err, out)
	}
	var listed []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		listed = append(listed, strings.TrimSuffix(line, ": OK"))
	}
	slices.Sort(listed)
	want := []string{"coredns-linux-amd64", "coredns-linux-amd64.cdx.json", "coredns-linux-arm64",
		"coredns-linux-arm64.cdx.json", "k8s-gateway-" + chartVersion + ".tgz"}
	if !slices.Equal(listed, want) {
		t.Errorf("SHA256SUMS lists %v, want %v", listed, want)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		var bom struct {
			BOMFormat string `json:"bomFormat"`
			Metadata  struct {
				Component struct{ Name, Version string }
			}
			Components []struct{ Name, Version string }
		}
		b, err := os.ReadFile(filepath.Join(dist, "coredns-linux-"+arch+".cdx.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &bom); err != nil {
			t.Fatalf("%s SBOM: %v", arch, err)
		}
		var names []string
		for _, c := range bom.Components {
			names = append(names, c.Name)
		}
		if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Version != version ||
			!slices.Contains(names, "github.com/coredns/coredns") || !slices.Contains(names, "k8s.io/client-go") {
			t.Errorf("%s SBOM: format %q, component %+v, %d components (coredns and client-go among them: %v)", arch,
				bom.BOMFormat, bom.Metadata.Component, len(names),
				slices.Contains(names, "github.com/coredns/coredns") && slices.Contains(names, "k8s.io/client-go"))
		}
	}
}

// chartField reads a top-level field of charts/k8s-gateway/Chart.yaml.
func chartField(t *testing.T, field string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "charts/k8s-gateway/Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	t.Fatalf("Chart.yaml has no %s", field)
	return ""
}

// makeOut runs a make target of the repository and returns its standard output.
func makeOut(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-s", "-C", repoRoot}, args...)...)
	// A make of its own, whatever make runs this test.
	cmd.Env = append(os.Environ(), "MAKEFLAGS=", "MAKELEVEL=", "MFLAGS=")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, stdout.String())
	}
	return stdout.String()
}

func command(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}

func helmOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(helmBin, args...).Output()
	if err != nil {
		t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
