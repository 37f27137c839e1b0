package harness

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"time"

	"github.com/miekg/dns"
)

// TestCA is a certificate authority made for one test, and a serving
// certificate it signed.
type TestCA struct {
	CertPEM []byte // the CA certificate, PEM
	Pool    *x509.CertPool
	// ServerCertPEM (the leaf, then the CA: the chain a server sends) and
	// ServerKeyPEM are the serving certificate and its key, PEM.
	ServerCertPEM, ServerKeyPEM []byte
}

// NewTestCA makes a CA and a serving certificate for dnsNames and ips, valid
// for an hour (ECDSA P-256).
func NewTestCA(dnsNames []string, ips []net.IP) (*TestCA, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "k8s_gateway test CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: dnsNames[0]},
		DNSNames:     dnsNames,
		IPAddresses:  ips,
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	ca := &TestCA{
		CertPEM:      pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Pool:         x509.NewCertPool(),
		ServerKeyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	ca.ServerCertPEM = append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca.CertPEM...)
	ca.Pool.AddCert(caCert)
	return ca, nil
}

// TLSSecret is a kubernetes.io/tls Secret of the serving certificate, as YAML.
func (ca *TestCA) TLSSecret(namespace, name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata: {name: %s, namespace: %s}
data:
  tls.crt: %s
  tls.key: %s
`, name, namespace, b64(ca.ServerCertPEM), b64(ca.ServerKeyPEM))
}

// clientTLS verifies the server as serverName against the CA.
func (ca *TestCA) clientTLS(serverName string) *tls.Config {
	return &tls.Config{RootCAs: ca.Pool, ServerName: serverName, MinVersion: tls.VersionTLS12}
}

// ExchangeDoT asks m over DNS over TLS (RFC 7858) at addr, verifying the
// certificate for serverName.
func (ca *TestCA) ExchangeDoT(m *dns.Msg, addr, serverName string) (*dns.Msg, error) {
	c := &dns.Client{Net: "tcp-tls", TLSConfig: ca.clientTLS(serverName), Timeout: 3 * time.Second}
	r, _, err := c.Exchange(m, addr)
	return r, err
}

// ExchangeDoH asks m over DNS over HTTPS (RFC 8484: POST of
// application/dns-message to /dns-query) at addr, verifying the certificate
// for serverName.
func (ca *TestCA) ExchangeDoH(m *dns.Msg, addr, serverName string) (*dns.Msg, error) {
	wire, err := m.Pack()
	if err != nil {
		return nil, err
	}
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   ca.clientTLS(serverName),
		ForceAttemptHTTP2: true,
		DisableKeepAlives: true,
	}}
	req, err := http.NewRequest(http.MethodPost, "https://"+addr+"/dns-query", bytes.NewReader(wire))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/dns-message")
	req.Header.Set("Accept", "application/dns-message")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/dns-message" {
		return nil, fmt.Errorf("DoH: HTTP %d, Content-Type %q: %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	r := new(dns.Msg)
	if err := r.Unpack(body); err != nil {
		return nil, fmt.Errorf("DoH: %w", err)
	}
	return r, nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
