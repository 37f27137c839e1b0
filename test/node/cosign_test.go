//go:build e2e

package node

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

var cosignPath = sync.OnceValues(func() (string, error) {
	out, err := exec.Command(filepath.Join(repoRoot, "hack/gotool.sh"), "cosign").Output()
	return strings.TrimSpace(string(out)), err
})

// cosignErr runs cosign (hack/gotool.sh builds it) in dir with env added,
// offline: no Sigstore instance is reachable here.
func cosignErr(dir string, env []string, args ...string) (string, error) {
	bin, err := cosignPath()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func cosignIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := cosignErr(dir, env, args...)
	if err != nil {
		t.Fatalf("cosign %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// attestation downloads the attestations of ref from the registry and
// returns the predicate of the one of predicateType, as JSON.
func attestation(t *testing.T, dir, ref, predicateType string) string {
	t.Helper()
	bin, err := cosignPath()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "download", "attestation", "--predicate-type", predicateType,
		"--allow-http-registry", "--allow-insecure-registry", ref)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cosign download attestation --predicate-type %s %s: %v", predicateType, ref, err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		// A Sigstore bundle (cosign's new format) holding the DSSE envelope.
		var bundle struct {
			DSSE struct {
				Payload string `json:"payload"`
			} `json:"dsseEnvelope"`
		}
		if err := json.Unmarshal(sc.Bytes(), &bundle); err != nil {
			t.Fatalf("cosign download attestation %s: %v", ref, err)
		}
		payload, err := base64.StdEncoding.DecodeString(bundle.DSSE.Payload)
		if err != nil {
			t.Fatalf("attestation of %s: payload: %v", ref, err)
		}
		var statement struct {
			PredicateType string `json:"predicateType"`
			Subject       []struct{ Digest map[string]string }
			Predicate     json.RawMessage `json:"predicate"`
		}
		if err := json.Unmarshal(payload, &statement); err != nil {
			t.Fatalf("attestation of %s: %v", ref, err)
		}
		if statement.PredicateType != predicateType {
			continue
		}
		if _, digest, _ := strings.Cut(ref, "@sha256:"); len(statement.Subject) != 1 || statement.Subject[0].Digest["sha256"] != digest {
			t.Errorf("attestation of %s: subject %v", ref, statement.Subject)
		}
		return string(statement.Predicate)
	}
	t.Fatalf("%s has no attestation of type %s:\n%s", ref, predicateType, out)
	return ""
}

// docsVerify runs the commands of docs/guides/install.md's block "sh verify-key"
// (a release signed with a key of one's own) against this release: its
// registry and version for the examples', the test key for cosign.pub, and
// plain HTTP for the loopback registry; and checks that cosign takes every
// flag of the keyless block the users of the published releases run.
func docsVerify(t *testing.T, dir, pub, dest, version, chartVersion string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs/guides/install.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string][]string{}
	var in string
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case in == "" && strings.HasPrefix(line, "~~~ sh verify-"):
			in = strings.TrimPrefix(line, "~~~ sh ")
		case in != "" && strings.HasPrefix(line, "~~~"):
			in = ""
		case in != "":
			blocks[in] = append(blocks[in], line)
		}
	}
	commands := func(block string) [][]string {
		joined := strings.ReplaceAll(strings.Join(blocks[block], "\n"), "\\\n", " ")
		var out [][]string
		for _, line := range strings.Split(joined, "\n") {
			if f := shellWords(line); len(f) > 0 && f[0] == "cosign" {
				out = append(out, f[1:])
			}
		}
		if len(out) < 3 {
			t.Fatalf("docs/guides/install.md: the block %q has %d cosign commands, want those of the image, the chart and the attestations", block, len(out))
		}
		return out
	}
	replacer := strings.NewReplacer("registry.example.com/dns", dest, "cosign.pub", pub,
		":v0.1.0", ":"+version, ":0.1.0", ":"+chartVersion)
	for _, args := range commands("verify-key") {
		for i := range args {
			args[i] = replacer.Replace(args[i])
		}
		args = append(args, "--allow-http-registry", "--allow-insecure-registry")
		if out, err := cosignErr(dir, nil, args...); err != nil {
			t.Errorf("docs/guides/install.md: cosign %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	flag := regexp.MustCompile(`^--[a-z-]+`)
	for _, args := range commands("verify-keyless") {
		help, _ := cosignErr(dir, nil, args[0], "--help")
		for _, a := range args[1:] {
			if f := flag.FindString(a); f != "" && !strings.Contains(help, "  "+f+" ") && !strings.Contains(help, "  "+f+"=") {
				t.Errorf("docs/guides/install.md: cosign %s has no flag %s", args[0], f)
			}
		}
	}
}

// shellWords splits a command line of the docs: words, and '...' quoted.
func shellWords(line string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`'[^']*'|\S+`).FindAllString(line, -1) {
		out = append(out, strings.Trim(m, "'"))
	}
	return out
}

// tamperedChart returns a chart of the same name and version as the one
// at tgz, with a changed values.yaml: what an attacker who can push to the
// registry would publish.
func tamperedChart(t *testing.T, tgz string) string {
	t.Helper()
	dir := t.TempDir()
	command(t, "tar", "-xzf", tgz, "-C", dir)
	values := filepath.Join(dir, "k8s-gateway", "values.yaml")
	b, err := os.ReadFile(values)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(values, append(b, "# tampered\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	helm(t, "package", filepath.Join(dir, "k8s-gateway"), "-d", out)
	files, _ := filepath.Glob(filepath.Join(out, "*.tgz"))
	if len(files) != 1 {
		t.Fatalf("helm package wrote %v", files)
	}
	return files[0]
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
