package gateway

import (
	"fmt"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"

	"github.com/seed-e581d630/k8s_gateway/internal/tlsreload"
)

// The tls_reload option (package internal/tlsreload): the server block's TLS
// connections (DoT, DoH) are served the certificate that CERT and KEY hold
// now, not the one the tls plugin read at the start.

// setupTLSReload makes the server block's TLS listeners serve the
// certificate of g's tls_reload files. The tls plugin, set up before
// k8s_gateway, must be in the block.
func setupTLSReload(c *caddy.Controller, g *Gateway) error {
	if g.tlsReload == nil {
		return nil
	}
	cfg := dnsserver.GetConfig(c)
	if cfg.TLSConfig == nil {
		return fmt.Errorf("tls_reload: the server block has no tls plugin, whose certificate it would reload")
	}
	r, err := tlsreload.For(g.tlsReload[0], g.tlsReload[1])
	if err != nil {
		return fmt.Errorf("tls_reload: %w", err)
	}
	cfg.TLSConfig.Certificates = nil // else Go serves them to clients without SNI
	cfg.TLSConfig.GetCertificate = r.GetCertificate
	cfg.SetTLSConfigIdentity(r.Identity)
	return nil
}
