package tlsreload

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/core/dnsserver"

	"github.com/seed-e581d630/k8s_gateway/internal/plog"
)

// checkEvery is how often a handshake reads the files again.
const checkEvery = 10 * time.Second

// Reloader serves the certificate of one CERT and KEY pair.
type Reloader struct {
	certFile, keyFile string
	// Identity is the same for every block using the pair.
	Identity *dnsserver.TLSConfigIdentity

	cert      atomic.Pointer[tls.Certificate]
	checkedAt atomic.Int64 // unix nanoseconds of the last read
	mu        sync.Mutex   // one reader of the files at a time
	certPEM   []byte       // what cert was made of
	keyPEM    []byte
	now       func() time.Time
}

// reloaders are the reloaders by their files: the server blocks (views)
// that share a TLS listener must share the callback's identity.
var (
	reloadersMu sync.Mutex
	reloaders   = map[[2]string]*Reloader{}
)

// For returns the reloader of certFile and keyFile, with the pair loaded now.
func For(certFile, keyFile string) (*Reloader, error) {
	reloadersMu.Lock()
	defer reloadersMu.Unlock()
	key := [2]string{certFile, keyFile}
	r, ok := reloaders[key]
	if !ok {
		r = &Reloader{certFile: certFile, keyFile: keyFile, Identity: dnsserver.NewTLSConfigIdentity(), now: time.Now}
	}
	if _, err := r.reload(); err != nil {
		return nil, err
	}
	reloaders[key] = r
	return r, nil
}

// reload reads the files and, when they changed and load, serves them. It
// reports whether the served certificate changed.
func (r *Reloader) reload() (bool, error) {
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

// GetCertificate is the tls.Config's GetCertificate: the served pair,
// read again first when the last read is older than checkEvery.
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if r.now().UnixNano()-r.checkedAt.Load() >= int64(checkEvery) {
		changed, err := r.reload()
		switch {
		case err != nil:
			plog.Log.Warningf("tls_reload: keeping the certificate served: %v", err)
		case changed:
			plog.Log.Infof("tls_reload: serving the new certificate of %s", r.certFile)
		}
	}
	return r.cert.Load(), nil
}
