package gateway

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
)

// writeTestCert writes a new self-signed certificate for name and its key
// to certFile and keyFile and returns the certificate's DER bytes.
func writeTestCert(t *testing.T, name, certFile, keyFile string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for file, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return der
}

// TestCertReloader: the served certificate follows the files, read again
// at a handshake once certCheckEvery has passed; a pair that does not load
// leaves the last good one served.
func TestCertReloader(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := writeTestCert(t, "one.example.com", certFile, keyFile)
	r, err := certReloaderFor(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r.now = func() time.Time { return now }
	served := func() []byte {
		t.Helper()
		c, err := r.getCertificate(&tls.ClientHelloInfo{})
		if err != nil || c == nil {
			t.Fatalf("getCertificate: %v, %v", c, err)
		}
		return c.Certificate[0]
	}
	if !bytes.Equal(served(), first) {
		t.Fatal("not the certificate of the files")
	}

	renewed := writeTestCert(t, "one.example.com", certFile, keyFile)
	if !bytes.Equal(served(), first) {
		t.Error("the files were read again before certCheckEvery")
	}
	now = now.Add(certCheckEvery)
	if !bytes.Equal(served(), renewed) {
		t.Error("the renewed certificate is not served after certCheckEvery")
	}

	if err := os.WriteFile(certFile, []byte("half-written"), 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(certCheckEvery)
	if !bytes.Equal(served(), renewed) {
		t.Error("a pair that does not load replaced the served one")
	}

	// Another block naming the same files shares the reloader (one TLS
	// listener may serve several views).
	if again, err := certReloaderFor(certFile, keyFile); err == nil || again != nil {
		t.Errorf("certReloaderFor with a broken pair: %v, %v; want an error", again, err)
	}
	writeTestCert(t, "one.example.com", certFile, keyFile)
	if again, err := certReloaderFor(certFile, keyFile); err != nil || again != r {
		t.Errorf("certReloaderFor of the same files: %p, %v; want the same reloader %p", again, err, r)
	}
}

// TestSetupTLSReload: the option replaces the tls plugin's fixed
// certificate by the reloader, and needs the tls plugin in the block.
func TestSetupTLSReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	der := writeTestCert(t, "dns.example.com", certFile, keyFile)

	g, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n tls_reload "+certFile+" "+keyFile+"\n}"))
	if err != nil {
		t.Fatal(err)
	}
	c := caddy.NewTestController("dns", "")
	if err := g.setupTLSReload(c); err == nil || !strings.Contains(err.Error(), "no tls plugin") {
		t.Errorf("without the tls plugin: %v", err)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := dnsserver.GetConfig(c)
	cfg.TLSConfig = &tls.Config{Certificates: []tls.Certificate{pair}}
	if err := g.setupTLSReload(c); err != nil {
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
