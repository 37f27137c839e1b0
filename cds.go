package gateway

import (
	"fmt"
	"sync/atomic"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/delegation"
)

// cdsFeature is the cds option: the zones' apexes carry CDS and CDNSKEY
// records for the keys the dnssec plugin signs with (delegation.CDS).
type cdsFeature struct {
	on, remove bool // the option; remove: its delete records instead (cds delete)
	records    atomic.Pointer[delegation.CDS]
}

// parseCDS reads `cds [delete]`.
func parseCDS(c *caddy.Controller, g *Gateway, _ string, args []string) error {
	switch {
	case len(args) == 0:
		g.cds.on = true
	case len(args) == 1 && args[0] == "delete":
		g.cds.on, g.cds.remove = true, true
	default:
		return argCountErr(c, "cds [delete]", args)
	}
	return nil
}

// start reads the keys of signer, the dnssec plugin of the server block
// (nil when there is none), and builds the CDS and CDNSKEY records of each
// zone. It fails without a dnssec plugin, or when it signs one of the zones
// with no key.
func (f *cdsFeature) start(signer plugin.Handler, zones []string, ttl uint32) error {
	if !f.on {
		return nil
	}
	if signer == nil {
		return fmt.Errorf("cds: the server block has no dnssec plugin: the CDS and CDNSKEY records follow its keys")
	}
	cds, err := delegation.NewCDS(signer, zones, ttl, f.remove)
	if err != nil {
		return fmt.Errorf("cds: %v", err)
	}
	f.records.Store(cds)
	return nil
}

// answer returns the CDS or CDNSKEY RRset asked for at the apex of zone
// zi, or nil.
func (f *cdsFeature) answer(zi int, qname string, qtype uint16) []dns.RR {
	return f.records.Load().Answer(zi, qname, qtype)
}
