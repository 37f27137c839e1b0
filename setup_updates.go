package gateway

import (
	"fmt"
	"slices"

	"github.com/coredns/caddy"

	"github.com/seed-e581d630/k8s_gateway/acmeupdate"
	"github.com/seed-e581d630/k8s_gateway/fleet"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// The updates block of the Corefile (update.go): its parsing, and the setup
// of its service.

// updatesLines are where the updates block and its cluster line are, for
// the errors of the setup.
type updatesLines struct {
	file          string
	block, clusOp int
}

// errAt returns an error naming line of the Corefile.
func (l updatesLines) errAt(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d - Error during parsing: updates: %s", l.file, line, fmt.Sprintf(format, args...))
}

// parseUpdates reads the updates block; its options are one a line. The
// cluster line is the plugin's; the others are acmeupdate's.
func parseUpdates(c *caddy.Controller, g *Gateway) error {
	if g.updates.opts != nil {
		return c.Err("updates is given twice")
	}
	g.updates.at = updatesLines{file: c.File(), block: c.Line()}
	if !c.NextArg() || c.Val() != "{" {
		return c.Err("updates: want updates { ... } with its options inside the braces")
	}
	opts := acmeupdate.NewOptions()
	var line []string
	at := 0
	flush := func() error {
		if len(line) == 0 {
			return nil
		}
		if line[0] == "cluster" {
			if len(line) != 2 {
				return g.updates.at.errAt(at, "want cluster NAME, got %d argument(s)", len(line)-1)
			}
			g.updates.cluster, g.updates.at.clusOp = line[1], at
			line = nil
			return nil
		}
		if err := opts.Set(line[0], line[1:]); err != nil {
			return fmt.Errorf("%s:%d - Error during parsing: updates: %v", c.File(), at, err)
		}
		line = nil
		return nil
	}
	for c.Next() {
		switch tok := c.Val(); {
		case tok == "}":
			if err := flush(); err != nil {
				return err
			}
			if err := opts.Check(); err != nil {
				return c.Err(err.Error())
			}
			g.updates.opts = opts
			return nil
		case tok == "{":
			return c.Err("updates: a nested block is not allowed")
		case len(line) > 0 && c.Line() == at:
			line = append(line, tok)
		default:
			if err := flush(); err != nil {
				return err
			}
			line, at = []string{tok}, c.Line()
		}
	}
	return c.Err("updates block not closed: missing }")
}

// localOptions returns the options of the local cluster: the one holding
// the keys' Secrets and the challenges' DNSEndpoints, whose namespaces the
// keys are bound to. Without cluster blocks it is the block's one cluster;
// with them, the updates block must name one (cluster NAME), so that the
// keys, Secrets and DNSEndpoints are all in one cluster and ownership reads
// its namespaces.
func (g *Gateway) localOptions() (clusterOptions, error) {
	at := g.updates.at
	if len(g.clusters) == 0 {
		if g.updates.cluster != "" {
			return clusterOptions{}, at.errAt(at.clusOp, "cluster %s: there are no cluster blocks; the keys and challenges are in the block's own cluster", g.updates.cluster)
		}
		return g.clusterOptions, nil
	}
	if g.updates.cluster == "" {
		return clusterOptions{}, at.errAt(at.block, "with cluster blocks, name the cluster that holds the keys' Secrets and the challenges: cluster NAME")
	}
	for _, s := range g.clusters {
		if s.name == g.updates.cluster {
			return s.resolved(g.clusterOptions), nil
		}
	}
	return clusterOptions{}, at.errAt(at.clusOp, "cluster %s: no cluster block of that name", g.updates.cluster)
}

// setupUpdates runs the updates service with the plugin, when the option is
// on. UPDATE messages come on the service's own listen address (see package
// acmeupdate: a MAC covers bytes that CoreDNS does not hand a plugin), never
// through CoreDNS, which answers them NOTIMP.
func setupUpdates(c *caddy.Controller, g *Gateway) error {
	if g.updates.opts == nil {
		return nil
	}
	local, err := g.localOptions()
	if err != nil {
		return err
	}
	if !slices.Contains(local.resources, "DNSEndpoint") {
		return g.updates.at.errAt(g.updates.at.block, "the challenges are DNSEndpoints: add DNSEndpoint to resources")
	}
	g.updates.service = newUpdateService(g)
	// The owner view reads what every block publishes (recordKinds): known
	// once every block is set up, before the first OnStartup.
	c.OnStartup(func() error {
		if g.discovery != nil || g.clusterAPI != nil {
			if g.ownership != index.Union && g.viewFilters() {
				return g.updates.at.errAt(g.updates.at.block, "with clusterapi, ownership cannot be read past the block's namespaces, label, class and address filters, nor past the kinds other blocks read: remove them or use ownership union")
			}
		}
		var err error
		if g.updates.owners, err = newOwnerView(g, g.kubeconfigAPI); err != nil {
			return fmt.Errorf("updates: %w", err)
		}
		cfg, err := watch.RestConfig(local.kubeconfig, local.kubecontext)
		if err != nil {
			return fmt.Errorf("updates: %w", err)
		}
		if v := g.updates.owners; v != nil {
			v.start(fleet.HealthTiming{}) // controllers only: an owner view runs no health watch
		}
		return g.updates.service.Start(cfg)
	})
	c.OnShutdown(func() error {
		g.updates.service.Stop()
		if v := g.updates.owners; v != nil {
			v.stop()
			v.index.Close()
		}
		return nil
	})
	return nil
}
