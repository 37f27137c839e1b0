package tlsreload

import (
	"bytes"
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestCertReloader: the served certificate follows the files, read again
// at a handshake once checkEvery has passed; a pair that does not load
// leaves the last good one served.
func TestCertReloader(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := testutil.WriteCert(t, "one.example.com", certFile, keyFile)
	r, err := For(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r.now = func() time.Time { return now }
	served := func() []byte {
		t.Helper()
		c, err := r.GetCertificate(&tls.ClientHelloInfo{})
		if err != nil || c == nil {
			t.Fatalf("GetCertificate: %v, %v", c, err)
		}
		return c.Certificate[0]
	}
	if !bytes.Equal(served(), first) {
		t.Fatal("not the certificate of the files")
	}

	renewed := testutil.WriteCert(t, "one.example.com", certFile, keyFile)
	if !bytes.Equal(served(), first) {
		t.Error("the files were read again before checkEvery")
	}
	now = now.Add(checkEvery)
	if !bytes.Equal(served(), renewed) {
		t.Error("the renewed certificate is not served after checkEvery")
	}

	if err := os.WriteFile(certFile, []byte("half-written"), 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(checkEvery)
	if !bytes.Equal(served(), renewed) {
		t.Error("a pair that does not load replaced the served one")
	}

	// Another block naming the same files shares the reloader (one TLS
	// listener may serve several views).
	if again, err := For(certFile, keyFile); err == nil || again != nil {
		t.Errorf("For with a broken pair: %v, %v; want an error", again, err)
	}
	testutil.WriteCert(t, "one.example.com", certFile, keyFile)
	if again, err := For(certFile, keyFile); err != nil || again != r {
		t.Errorf("For of the same files: %p, %v; want the same reloader %p", again, err, r)
	}
}
