//go:build e2e

package node

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed-e581d630/k8s_gateway/test/internal/harness"
)

// The OCI media types the release must use.
const (
	ociIndex    = "application/vnd.oci.image.index.v1+json"
	ociManifest = "application/vnd.oci.image.manifest.v1+json"
	ociConfig   = "application/vnd.oci.image.config.v1+json"
)

// startRegistry runs Debian's docker-registry (the distribution registry)
// on a free loopback port with a filesystem store of its own, and returns
// its host:port. It is stopped when the test ends.
func startRegistry(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Fatal("docker-registry not found: run hack/install-deps.sh (Debian package docker-registry)")
	}
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	config := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: %s}
http:
  addr: %s
  secret: k8sgw-e2e
`, filepath.Join(dir, "store"), addr)), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", config)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		logf.Close()
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/v2/"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		select {
		case <-done:
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("docker-registry exited:\n%s", b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("docker-registry at %s not serving /v2/ after 20s", addr)
		}
	}
}

// registryGet fetches /v2/<repo>/<kind>/<ref> (kind: manifests or blobs)
// from the loopback registry, asking for mediaType; it returns the body,
// the Content-Type and the Docker-Content-Digest the registry sent.
func registryGet(t *testing.T, registry, repo, kind, ref, mediaType string) ([]byte, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s/v2/%s/%s/%s", registry, repo, kind, ref), nil)
	if err != nil {
		t.Fatal(err)
	}
	if mediaType != "" {
		req.Header.Set("Accept", mediaType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", req.URL, resp.Status, body)
	}
	return body, resp.Header.Get("Content-Type"), resp.Header.Get("Docker-Content-Digest")
}

// registryJSON fetches a manifest or blob and decodes it into v.
func registryJSON(t *testing.T, registry, repo, kind, ref, mediaType string, v any) string {
	t.Helper()
	body, ctype, digest := registryGet(t, registry, repo, kind, ref, mediaType)
	if kind == "manifests" && ctype != mediaType {
		t.Fatalf("%s/%s:%s is %q, want %q", registry, repo, ref, ctype, mediaType)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s/%s %s: %v", repo, ref, kind, err)
	}
	return digest
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
	Platform    *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

type ociIndexJSON struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Manifests     []descriptor      `json:"manifests"`
	Annotations   map[string]string `json:"annotations"`
}

type ociManifestJSON struct {
	MediaType   string            `json:"mediaType"`
	Config      descriptor        `json:"config"`
	Layers      []descriptor      `json:"layers"`
	Annotations map[string]string `json:"annotations"`
}

type ociConfigJSON struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		User         string              `json:"User"`
		Entrypoint   []string            `json:"Entrypoint"`
		Cmd          []string            `json:"Cmd"`
		ExposedPorts map[string]struct{} `json:"ExposedPorts"`
		Labels       map[string]string   `json:"Labels"`
	} `json:"config"`
}

type layerFile struct {
	mode int64
	data []byte
}

// layerFiles reads a gzipped tar layer: each regular file's mode and bytes.
func layerFiles(t *testing.T, blob []byte) map[string]layerFile {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]layerFile{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = struct {
			mode int64
			data []byte
		}{h.Mode, data}
	}
}
