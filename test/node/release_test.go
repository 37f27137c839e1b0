//go:build e2e

package node

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// TestRelease runs `make release` against a real OCI registry on loopback
// (Debian's docker-registry), twice from the same commit, signing with a test
// key; checks what it pushed and wrote, the signatures and attestations with
// cosign and the commands docs/guides/install.md gives users, that a tampered tag
// fails verification, and installs the release as a user would: helm
// install oci://... with the node's containerd pulling the image by digest.
func TestRelease(t *testing.T) {
	needNode(t)
	registry := startRegistry(t)
	version := chartField(t, "appVersion")
	chartVersion := strings.TrimPrefix(version, "v")
	dest := registry + "/k8sgw"

	// The project's base: its bytes depend only on hack/ocirelease's sources
	// and go.sum (the CA bundle of a pinned module, time 0), so pushed again,
	// from any machine, it has the same digest.
	start := time.Now()
	base := strings.TrimSpace(makeOut(t, nil, "release-base", "REGISTRY="+dest))
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(dest) + `/k8s-gateway-base@sha256:[0-9a-f]{64}$`).MatchString(base) {
		t.Fatalf("make release-base printed %q, want %s/k8s-gateway-base@sha256:...", base, dest)
	}
	t.Logf("make release-base: %s (%s)", time.Since(start).Round(100*time.Millisecond), base)
	if again := strings.TrimSpace(makeOut(t, nil, "release-base", "REGISTRY="+dest)); again != base {
		t.Fatalf("make release-base again: %s, first %s", again, base)
	}
	checkBase(t, registry, base)

	// A test key pair, and a release signed with it (no transparency log here).
	keys := t.TempDir()
	signEnv := []string{"COSIGN_PASSWORD=k8sgw-test", "SIGN=key", "COSIGN_KEY=" + filepath.Join(keys, "cosign.key")}
	cosignIn(t, keys, signEnv, "generate-key-pair")
	pub := filepath.Join(keys, "cosign.pub")

	dist := t.TempDir()
	start = time.Now()
	makeOut(t, signEnv, "release", "VERSION="+version, "REGISTRY="+dest, "DIST="+dist)
	t.Logf("make release %s (signed, attested): %s", version, time.Since(start).Round(100*time.Millisecond))
	image := strings.TrimSpace(readFile(t, filepath.Join(dist, "image.txt")))
	chartRefDigest := strings.TrimSpace(readFile(t, filepath.Join(dist, "chart.txt")))

	// The same commit released again: the same image, byte for byte.
	dist2 := t.TempDir()
	start = time.Now()
	makeOut(t, signEnv, "release", "VERSION="+version, "REGISTRY="+dest, "DIST="+dist2)
	t.Logf("make release %s again: %s", version, time.Since(start).Round(100*time.Millisecond))
	if again := strings.TrimSpace(readFile(t, filepath.Join(dist2, "image.txt"))); again != image {
		t.Errorf("two releases of one commit: images %s and %s", image, again)
	} else {
		t.Logf("two releases of one commit: one image, %s", image)
	}
	chartRefDigest2 := strings.TrimSpace(readFile(t, filepath.Join(dist2, "chart.txt")))
	t.Logf("the chart of the two runs: %s, %s", chartRefDigest, chartRefDigest2)

	revision := strings.TrimSpace(command(t, "git", "-C", repoRoot, "rev-parse", "HEAD"))
	labels := map[string]string{
		"org.opencontainers.image.source":   "https://github.com/seed-e581d630/k8s_gateway",
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.revision": revision,
	}
	indexDigest := checkImage(t, registry, "k8sgw/k8s_gateway", version, base, dist, labels)
	if image != dest+"/k8s_gateway@"+indexDigest {
		t.Errorf("dist/image.txt = %q, want %s/k8s_gateway@%s", image, dest, indexDigest)
	}
	checkDist(t, dist, version, chartVersion)

	// Signatures and attestations, checked with cosign and the key's public half.
	verify := func(args ...string) (string, error) {
		return cosignErr(keys, nil, append(append([]string{}, args...), "--key", pub, "--insecure-ignore-tlog=true",
			"--allow-http-registry", "--allow-insecure-registry")...)
	}
	for _, ref := range []string{dest + "/k8s_gateway:" + version, image, dest + "/charts/k8s-gateway:" + chartVersion, chartRefDigest2} {
		if out, err := verify("verify", ref); err != nil {
			t.Errorf("cosign verify %s: %v\n%s", ref, err, out)
		}
	}
	for plat, digest := range platformDigests(t, registry, "k8sgw/k8s_gateway", indexDigest) {
		ref := dest + "/k8s_gateway@" + digest
		if out, err := verify("verify", ref); err != nil {
			t.Errorf("cosign verify %s (%s): %v\n%s", ref, plat, err, out)
		}
		if out, err := verify("verify-attestation", "--type", "cyclonedx", ref); err != nil {
			t.Errorf("cosign verify-attestation --type cyclonedx %s (%s): %v\n%s", ref, plat, err, out)
		}
		bin := fileSum(t, filepath.Join(dist, "coredns-"+strings.ReplaceAll(plat, "/", "-")))
		if sbom := attestation(t, keys, ref, "https://cyclonedx.org/bom"); !strings.Contains(sbom, bin) || !strings.Contains(sbom, "binary:hash:SHA-256") {
			t.Errorf("%s: the SBOM attestation does not name the binary's SHA-256 %s", plat, bin)
		}
	}
	if out, err := verify("verify-attestation", "--type", "slsaprovenance1", image); err != nil {
		t.Errorf("cosign verify-attestation --type slsaprovenance1 %s: %v\n%s", image, err, out)
	}
	prov := attestation(t, keys, image, "https://slsa.dev/provenance/v1")
	_, baseDigest, _ := strings.Cut(base, "@sha256:")
	for _, want := range []string{revision, baseDigest,
		fileSum(t, filepath.Join(dist, "coredns-linux-amd64")), fileSum(t, filepath.Join(dist, "coredns-linux-arm64"))} {
		if !strings.Contains(prov, want) {
			t.Errorf("the provenance attestation does not name %s:\n%s", want, prov)
		}
	}
	// The commands docs/guides/install.md gives to verify a release signed with a key.
	docsVerify(t, keys, pub, dest, version, chartVersion)

	// The chart, as helm pulls it from the registry: the release's versions,
	// and its default image the one just pushed, by digest.
	chartRef := "oci://" + dest + "/charts/k8s-gateway"
	pulled := t.TempDir()
	helm(t, "pull", chartRef, "--version", chartVersion, "--plain-http", "-d", pulled)
	if a, b := fileSum(t, filepath.Join(pulled, "k8s-gateway-"+chartVersion+".tgz")), fileSum(t, filepath.Join(dist2, "k8s-gateway-"+chartVersion+".tgz")); a != b {
		t.Errorf("the chart helm pulled (%s) is not the one the last release pushed (%s)", a, b)
	}
	meta := helmOut(t, "show", "chart", chartRef, "--version", chartVersion, "--plain-http")
	for _, want := range []string{"version: " + chartVersion, "appVersion: " + version, "name: k8s-gateway",
		"      image: " + dest + "/k8s_gateway:" + version + "@" + indexDigest} {
		if !slices.Contains(strings.Split(meta, "\n"), want) {
			t.Errorf("helm show chart: no line %q in\n%s", want, meta)
		}
	}
	values := helmOut(t, "show", "values", chartRef, "--version", chartVersion, "--plain-http")
	for _, want := range []string{"  registry: " + registry, "  repository: k8sgw/k8s_gateway", `  tag: ""`, `  digest: "` + indexDigest + `"`} {
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
	running := kubectl(t, "", "-n", ns, "get", "pod", pod, "-o", "jsonpath={.spec.containers[0].image} {.status.containerStatuses[0].imageID}")
	if want := image + " " + image; running != want {
		t.Fatalf("pod %s runs %q, want %q (the released index, by digest)", pod, running, want)
	}
	test := appNamespace(t)
	name := "rel." + test + ".example.com"
	ingress(t, test, "rel", name, "192.0.2.60")
	d := eventually(t, 30*time.Second, podIP(t, ns, pod), "1053", name, "60 IN A 192.0.2.60")
	t.Logf("the released image answers at the pod IP after %s", d)
	nodePort := kubectl(t, "", "-n", ns, "get", "service", release+"-k8s-gateway", "-o",
		`jsonpath={.spec.ports[?(@.protocol=="UDP")].nodePort}`)
	eventually(t, 30*time.Second, nodeAddr, nodePort, name, "60 IN A 192.0.2.60")

	// Tampered: the image's tag and the chart's version moved to something
	// the key never signed. Verification by tag fails; the release's digest
	// still verifies.
	crane := filepath.Join(harness.CacheDir(), "bin", "crane")
	command(t, crane, "copy", "--insecure", base, dest+"/k8s_gateway:"+version)
	if out, err := verify("verify", dest+"/k8s_gateway:"+version); err == nil {
		t.Errorf("cosign verify of the tampered tag %s/k8s_gateway:%s passed:\n%s", dest, version, out)
	}
	if out, err := verify("verify", image); err != nil {
		t.Errorf("cosign verify %s after its tag moved: %v\n%s", image, err, out)
	}
	helm(t, "push", tamperedChart(t, filepath.Join(dist2, "k8s-gateway-"+chartVersion+".tgz")), "oci://"+dest+"/charts", "--plain-http")
	if out, err := verify("verify", dest+"/charts/k8s-gateway:"+chartVersion); err == nil {
		t.Errorf("cosign verify of the tampered chart %s/charts/k8s-gateway:%s passed:\n%s", dest, chartVersion, out)
	}
}

// checkBase checks the project's base: both platforms, user 65532, and the CA
// bundle of the pinned module (Mozilla's roots, not the release machine's file).
func checkBase(t *testing.T, registry, base string) {
	t.Helper()
	name, digest, _ := strings.Cut(base, "@")
	repo := strings.TrimPrefix(name, registry+"/")
	var idx ociIndexJSON
	registryJSON(t, registry, repo, "manifests", digest, ociIndex, &idx)
	if len(idx.Manifests) != 2 {
		t.Fatalf("base: %d manifests, want linux/amd64 and linux/arm64", len(idx.Manifests))
	}
	var man ociManifestJSON
	registryJSON(t, registry, repo, "manifests", idx.Manifests[0].Digest, ociManifest, &man)
	var cfg ociConfigJSON
	registryJSON(t, registry, repo, "blobs", man.Config.Digest, "", &cfg)
	if cfg.Config.User != "65532:65532" {
		t.Errorf("base: user %q, want 65532:65532", cfg.Config.User)
	}
	blob, _, _ := registryGet(t, registry, repo, "blobs", man.Layers[0].Digest, "")
	ca := layerFiles(t, blob)["etc/ssl/certs/ca-certificates.crt"].data
	if n := bytes.Count(ca, []byte("-----BEGIN CERTIFICATE-----")); n < 100 {
		t.Errorf("base: the CA bundle has %d certificates, want Mozilla's roots (over 100)", n)
	}
	if machine, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt"); err == nil && bytes.Equal(machine, ca) {
		t.Errorf("base: the CA bundle is this machine's file, not the pinned module's")
	}
}

// checkImage checks the released index and each platform's image: OCI media
// types, both platforms, the labels and annotations, the base's layers by
// digest, the user and entrypoint, and the binary of dist as ko's
// /ko-app/coredns. It returns the index's digest.
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
	if idx.Annotations["org.opencontainers.image.base.name"] != base {
		t.Errorf("index: base.name annotation %q, want %s", idx.Annotations["org.opencontainers.image.base.name"], base)
	}
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
		got := fmt.Sprintf("%s/%s user=%s entrypoint=%q", cfg.OS, cfg.Architecture, cfg.Config.User, cfg.Config.Entrypoint)
		if want := plat + ` user=65532:65532 entrypoint=["/ko-app/coredns"]`; got != want {
			t.Errorf("%s config: %s, want %s", plat, got, want)
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
		if n := len(baseMan.Layers); n == 0 || len(man.Layers) <= n || man.Layers[0].Digest != baseMan.Layers[0].Digest {
			t.Fatalf("%s: layers %v do not extend the base's %v", plat, man.Layers, baseMan.Layers)
		}
		// The last layer holds the released binary, built for this platform.
		blob, _, _ := registryGet(t, registry, repo, "blobs", man.Layers[len(man.Layers)-1].Digest, "")
		files := layerFiles(t, blob)
		bin, ok := files["ko-app/coredns"]
		if !ok {
			bin, ok = files["/ko-app/coredns"]
		}
		if !ok || bin.mode&0o111 == 0 {
			names := slices.Collect(maps.Keys(files))
			t.Fatalf("%s: the last layer has no executable ko-app/coredns: %q", plat, names)
		}
		released, err := os.ReadFile(filepath.Join(dist, "coredns-"+strings.ReplaceAll(plat, "/", "-")))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bin.data, released) {
			t.Errorf("%s: /ko-app/coredns in the image is not dist's binary (ko's build and go build differ)", plat)
		}
		f, err := elf.NewFile(bytes.NewReader(bin.data))
		if err != nil {
			t.Fatalf("%s: /ko-app/coredns: %v", plat, err)
		}
		if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[m.Platform.Architecture]; f.Machine != want {
			t.Errorf("%s: /ko-app/coredns is built for %s", plat, f.Machine)
		}
	}
	slices.Sort(platforms)
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Fatalf("index platforms %v, want linux/amd64 and linux/arm64", platforms)
	}
	return digest
}

// platformDigests returns the digest of each platform's image in an index.
func platformDigests(t *testing.T, registry, repo, index string) map[string]string {
	t.Helper()
	var idx ociIndexJSON
	registryJSON(t, registry, repo, "manifests", index, ociIndex, &idx)
	out := map[string]string{}
	for _, m := range idx.Manifests {
		if m.Platform != nil {
			out[m.Platform.OS+"/"+m.Platform.Architecture] = m.Digest
		}
	}
	return out
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

// makeOut runs a make target of the repository, with env added to the
// environment, and returns its standard output.
func makeOut(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-s", "-C", repoRoot}, args...)...)
	// A make of its own, whatever make runs this test.
	cmd.Env = append(append(os.Environ(), "MAKEFLAGS=", "MAKELEVEL=", "MFLAGS="), env...)
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
