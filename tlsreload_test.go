package gateway

import (
	"bytes"
	"crypto/tls"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestSetupTLSReload: the option replaces the tls plugin's fixed
// certificate by the reloader, and needs the tls plugin in the block.
func TestSetupTLSReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	der := testutil.WriteCert(t, "dns.example.com", certFile, keyFile)

	g, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n tls_reload "+certFile+" "+keyFile+"\n}"))
	if err != nil {
		t.Fatal(err)
	}
	c := caddy.NewTestController("dns", "")
	if err := setupTLSReload(c, g); err == nil || !strings.Contains(err.Error(), "no tls plugin") {
		t.Errorf("without the tls plugin: %v", err)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := dnsserver.GetConfig(c)
	cfg.TLSConfig = &tls.Config{Certificates: []tls.Certificate{pair}}
	if err := setupTLSReload(c, g); err != nil {
		t.Fatal(err)
	}
	if len(cfg.TLSConfig.Certificates) != 0 || cfg.TLSConfig.GetCertificate == nil {
		t.Fatalf("TLS config %+v: want GetCertificate and no fixed certificates", cfg.TLSConfig)
	}
	if got, err := cfg.TLSConfig.GetCertificate(&tls.ClientHelloInfo{}); err != nil || !bytes.Equal(got.Certificate[0], der) {
		t.Errorf("GetCertificate: %v", err)
	}

	for _, bad := range []string{"tls_reload", "tls_reload " + certFile} {
		if _, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n "+bad+"\n}")); err == nil ||
			!strings.Contains(err.Error(), "tls_reload CERT KEY") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
