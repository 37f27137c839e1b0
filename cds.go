package gateway

import (
	"fmt"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin"

	"github.com/seed-e581d630/k8s_gateway/delegation"
)

// cdsOption is the cds option: the zones' apexes carry CDS and CDNSKEY
// records for the keys the dnssec plugin signs with (delegation.CDS).
type cdsOption struct {
	// remove publishes the delete records instead.
	remove bool
}

// parseCDS reads `cds [delete]`.
func parseCDS(c *caddy.Controller, g *Gateway, args []string) error {
	switch {
	case len(args) == 0:
		g.cdsOpt = &cdsOption{}
	case len(args) == 1 && args[0] == "delete":
		g.cdsOpt = &cdsOption{remove: true}
	default:
		return argCountErr(c, "cds [delete]", args)
	}
	return nil
}

// startCDS reads the keys of signer, the dnssec plugin of the server block
// (nil when there is none), and builds the CDS and CDNSKEY records of each
// zone. It fails without a dnssec plugin, or when it signs one of the zones
// with no key.
func (g *Gateway) startCDS(signer plugin.Handler) error {
	if g.cdsOpt == nil {
		return nil
	}
	if signer == nil {
		return fmt.Errorf("cds: the server block has no dnssec plugin: the CDS and CDNSKEY records follow its keys")
	}
	cds, err := delegation.NewCDS(signer, g.Zones, g.ttl, g.cdsOpt.remove)
	if err != nil {
		return fmt.Errorf("cds: %v", err)
	}
	g.cds.Store(cds)
	return nil
}
