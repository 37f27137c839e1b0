package gateway

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
)

// The tls_reload option: the tls plugin reads its certificate once, so a
// renewed certificate (a Secret that cert-manager rewrote, mounted in the
// pod) would be served only after a restart. tls_reload CERT KEY serves the
// server block's TLS connections (DoT, DoH) the certificate that CERT and
// KEY hold now: at a handshake, at most every certCheckEvery, the files are
// read again and a new pair replaces the served one. A pair that does not
// load (a half-written file) is logged and the last good one kept.

// certCheckEvery is how often a handshake reads the files again.
const certCheckEvery = 10 * time.Second

// certReloader serves the certificate of one CERT and KEY pair.
type certReloader struct {
	certFile, keyFile string
	identity          *dnsserver.TLSConfigIdentity // the same for every block using the pair

	cert      atomic.Pointer[tls.Certificate]
	checkedAt atomic.Int64 // unix nanoseconds of the last read
	mu        sync.Mutex   // one reader of the files at a time
	certPEM   []byte       // what cert was made of
	keyPEM    []byte
	now       func() time.Time
}

// certReloaders are the reloaders by their files: the server blocks (views)
// that share a TLS listener must share the callback's identity.
var (
	certReloadersMu sync.Mutex
	certReloaders   = map[[2]string]*certReloader{}
)

// certReloaderFor returns the reloader of certFile and keyFile, with the
// pair loaded now.
func certReloaderFor(certFile, keyFile string) (*certReloader, error) {
	certReloadersMu.Lock()
	defer certReloadersMu.Unlock()
	key := [2]string{certFile, keyFile}
	r, ok := certReloaders[key]
	if !ok {
		r = &certReloader{certFile: certFile, keyFile: keyFile, identity: dnsserver.NewTLSConfigIdentity(), now: time.Now}
	}
	if _, err := r.reload(); err != nil {
		return nil, err
	}
	certReloaders[key] = r
	return r, nil
}

// reload reads the files and, when they changed and load, serves them. It
// reports whether the served certificate changed.
func (r *certReloader) reload() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checkedAt.Store(r.now().UnixNano())
	certPEM, err := os.ReadFile(r.certFile)
	if err != nil {
		return false, err
	}
	keyPEM, err := os.ReadFile(r.keyFile)
	if err != nil {
		return false, err
	}
	if r.cert.Load() != nil && bytes.Equal(certPEM, r.certPEM) && bytes.Equal(keyPEM, r.keyPEM) {
		return false, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, fmt.Errorf("%s and %s: %w", r.certFile, r.keyFile, err)
	}
	r.certPEM, r.keyPEM = certPEM, keyPEM
	r.cert.Store(&pair)
	return true, nil
}

// getCertificate is the tls.Config's GetCertificate: the served pair,
// read again first when the last read is older than certCheckEvery.
func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if r.now().UnixNano()-r.checkedAt.Load() >= int64(certCheckEvery) {
		changed, err := r.reload()
		switch {
		case err != nil:
			log.Warningf("tls_reload: keeping the certificate served: %v", err)
		case changed:
			log.Infof("tls_reload: serving the new certificate of %s", r.certFile)
		}
	}
	return r.cert.Load(), nil
}

// setupTLSReload makes the server block's TLS listeners serve the
// certificate of g's tls_reload files. The tls plugin, set up before
// k8s_gateway, must be in the block.
func (g *Gateway) setupTLSReload(c *caddy.Controller) error {
	if g.tlsReload == nil {
		return nil
	}
	cfg := dnsserver.GetConfig(c)
	if cfg.TLSConfig == nil {
		return fmt.Errorf("tls_reload: the server block has no tls plugin, whose certificate it would reload")
	}
	r, err := certReloaderFor(g.tlsReload[0], g.tlsReload[1])
	if err != nil {
		return fmt.Errorf("tls_reload: %w", err)
	}
	cfg.TLSConfig.Certificates = nil // else Go serves them to clients without SNI
	cfg.TLSConfig.GetCertificate = r.getCertificate
	cfg.SetTLSConfigIdentity(r.identity)
	return nil
}
