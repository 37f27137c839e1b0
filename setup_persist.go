package gateway

import (
	"fmt"
	"path/filepath"

	"github.com/coredns/caddy"

	"github.com/seed-e581d630/k8s_gateway/persist"
)

// persistClaimsKey keys, in the storage of one Corefile's instance, the
// copy files its blocks keep: path → the line of the persist option.
type persistClaimsKey struct{}

// claimPersist refuses a block whose persist DIR would hold the copy of a
// zone that another block of the same Corefile keeps there (two views of a
// zone, say): the two would overwrite each other's copy, and a restart
// would answer one view from the other's records. A reload is another
// instance, with claims of its own.
func claimPersist(c *caddy.Controller, g *Gateway) error {
	if g.persist.dir == "" {
		return nil
	}
	claims, _ := c.Get(persistClaimsKey{}).(map[string]int)
	if claims == nil {
		claims = map[string]int{}
		c.Set(persistClaimsKey{}, claims)
	}
	dir, err := filepath.Abs(g.persist.dir)
	if err != nil {
		return fmt.Errorf("persist %s: %v", g.persist.dir, err)
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	for _, zone := range g.Zones {
		path := persist.Path(dir, zone)
		if line, ok := claims[path]; ok {
			return fmt.Errorf("persist %s: the block of the persist option at line %d keeps the copy of zone %s there already (%s); each block, and each view, needs a directory of its own",
				g.persist.dir, line, zone, path)
		}
	}
	for _, zone := range g.Zones {
		claims[persist.Path(dir, zone)] = g.persist.line
	}
	return nil
}
