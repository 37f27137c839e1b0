package gateway

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/coredns/caddy"

	"github.com/seed-e581d630/k8s_gateway/delegation"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/tsig"
)

// parentFeature is the parent option: the zones' delegations (NS and glue)
// are kept current in the parent zone through signed RFC 2136 updates
// (delegation.Syncer).
type parentFeature struct {
	on     bool
	parent delegation.Parent
	ttl    uint32             // of the records written; the block's ttl when 0
	syncer *delegation.Syncer // made by build
}

// parseParent reads `parent ADDRESS[:PORT] key NAME ALGORITHM SECRETFILE [ttl TTL]`.
func parseParent(c *caddy.Controller, g *Gateway, _ string, args []string) error {
	const usage = "parent ADDRESS[:PORT] key NAME ALGORITHM SECRETFILE [ttl TTL]"
	if len(args) != 5 && len(args) != 7 || args[1] != "key" {
		return argCountErr(c, usage, args)
	}
	addr := args[0]
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, "53")
	}
	host, _, _ := net.SplitHostPort(addr)
	if _, err := netip.ParseAddr(host); err != nil {
		return c.Errf("parent: %q is not an IP address (a name would need a lookup)", args[0])
	}
	secret, err := tsig.ReadSecretFile(args[4])
	if err != nil {
		return c.Errf("parent: %v", err)
	}
	key, err := tsig.New(args[2], args[3], secret)
	if err != nil {
		return c.Errf("parent: %v", err)
	}
	f := parentFeature{on: true, parent: delegation.Parent{Addr: addr, Key: key}}
	if len(args) == 7 {
		ttl, err := strconv.Atoi(args[6])
		if args[5] != "ttl" || err != nil || ttl < 0 || ttl > 86400 {
			return c.Errf("parent: ttl must be an integer from 0 to 86400; usage: %s", usage)
		}
		f.ttl = uint32(ttl)
	}
	g.parent = f
	return nil
}

// checkParent refuses a parent option that could not keep a zone's
// delegation in the parent (delegation.CheckZones: a registry name or
// record too long).
func checkParent(_ *caddy.Controller, g *Gateway, _ optionLines) (string, error) {
	if !g.parent.on {
		return "", nil
	}
	if err := delegation.CheckZones(g.Zones, g.nsRecords); err != nil {
		return "parent", fmt.Errorf("parent: %v", err)
	}
	return "", nil
}

// build makes the syncer of the block's delegations in the parent: the
// zones as answered once the plugin is ready.
func (f *parentFeature) build(g *Gateway) {
	if !f.on {
		return
	}
	ttl := f.ttl
	if ttl == 0 {
		ttl = g.ttl
	}
	f.syncer = delegation.NewSyncer(f.parent, ttl, g.Zones, g.nsRecords, func() *index.Snapshot {
		if !g.ready.Load() {
			return nil
		}
		return g.index.Snapshot()
	})
}

// kick asks the syncer to check the delegations (after a change of a zone).
func (f *parentFeature) kick() {
	if f.syncer != nil {
		f.syncer.Kick()
	}
}
