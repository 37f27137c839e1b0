package gateway

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/delegation"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
	"github.com/seed-e581d630/k8s_gateway/internal/tsig"
)

// parentOption is the parent option: the zones' delegations (NS and glue)
// are kept current in the parent zone through signed RFC 2136 updates.
type parentOption struct {
	parent delegation.Parent
	ttl    uint32 // of the records written; the block's ttl when 0
	// kick wakes the syncer; resync is how often it writes anyway.
	kick   chan struct{}
	resync time.Duration
}

var parentUpdates = metrics.CounterVec("parent_updates_total",
	"Counter of the updates of the zones' delegations in the parent (the parent option), by zone and result (changed, unchanged, error).",
	"zone", "result")

// parseParent reads `parent ADDRESS[:PORT] key NAME ALGORITHM SECRETFILE [ttl TTL]`.
func parseParent(c *caddy.Controller, g *Gateway, args []string) error {
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
	o := &parentOption{
		parent: delegation.Parent{Addr: addr, Key: key},
		kick:   make(chan struct{}, 1),
		resync: 5 * time.Minute,
	}
	if len(args) == 7 {
		ttl, err := strconv.Atoi(args[6])
		if args[5] != "ttl" || err != nil || ttl < 0 || ttl > 86400 {
			return c.Errf("parent: ttl must be an integer from 0 to 86400; usage: %s", usage)
		}
		o.ttl = uint32(ttl)
	}
	g.parentOpt = o
	return nil
}

// kickParent asks the syncer to check the delegations (after a change of a zone).
func (g *Gateway) kickParent() {
	if o := g.parentOpt; o != nil {
		select {
		case o.kick <- struct{}{}:
		default:
		}
	}
}

// runParent keeps the delegations of the forward zones in the parent current
// until stop: at each kick, and every resync. Failures are retried with a
// backoff of 1 s doubling to 1 min, and logged once per change of error.
func (g *Gateway) runParent(stop <-chan struct{}) {
	o := g.parentOpt
	backoff := time.Duration(0)
	lastErr := ""
	timer := time.NewTimer(o.resync)
	defer timer.Stop()
	for {
		select {
		case <-stop:
			return
		case <-o.kick:
		case <-timer.C:
		}
		err := g.syncParent(stop)
		switch {
		case errors.Is(err, errNotPublished):
			timer.Reset(time.Second)
		case err == nil:
			backoff, lastErr = 0, ""
			timer.Reset(o.resync)
		default:
			if err.Error() != lastErr {
				log.Warningf("parent: %v", err)
				lastErr = err.Error()
			}
			backoff = min(max(2*backoff, time.Second), time.Minute)
			timer.Reset(backoff)
		}
	}
}

// errNotPublished: the zones are not published yet; the delegation waits.
var errNotPublished = errors.New("the zones are not published yet")

// syncParent writes the delegation of every forward zone. A zone whose
// nameserver names below the cut have no address yet is skipped: a
// delegation without its glue would be lame.
func (g *Gateway) syncParent(stop <-chan struct{}) error {
	if !g.ready.Load() {
		return errNotPublished
	}
	snap := g.index.Snapshot()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	var errs []error
	for zi, zone := range g.Zones {
		if strings.HasSuffix(zone, ".arpa.") {
			continue // reverse zones are delegated by their address's owner
		}
		if g.nestedZone(zone) {
			continue // delegated by the block's own zone above it
		}
		want, missing := g.wantDelegation(snap, zi)
		if missing != "" {
			errs = append(errs, errors.New("zone "+zone+": no address for the nameserver "+missing+" yet: the delegation waits"))
			continue
		}
		for attempt := 0; ; attempt++ {
			res, err := g.parentOpt.parent.Sync(ctx, want)
			if errors.Is(err, delegation.ErrRace) && attempt < 3 {
				continue
			}
			switch {
			case err != nil:
				parentUpdates.WithLabelValues(zone, "error").Inc()
				errs = append(errs, err)
			case res.Added+res.Removed > 0:
				parentUpdates.WithLabelValues(zone, "changed").Inc()
				log.Infof("parent: delegation of %s: %d records added, %d removed at %s", zone, res.Added, res.Removed, g.parentOpt.parent.Addr)
			default:
				parentUpdates.WithLabelValues(zone, "unchanged").Inc()
			}
			break
		}
	}
	return errors.Join(errs...)
}

// wantDelegation returns the delegation of zone zi as the snapshot answers
// it: the NS names, and the addresses of those at or below the zone. missing
// names a nameserver below the cut without addresses.
func (g *Gateway) wantDelegation(snap *index.Snapshot, zi int) (w delegation.Want, missing string) {
	zone := g.Zones[zi]
	w = delegation.Want{Zone: zone, Glue: map[string][]netip.Addr{}, TTL: g.parentOpt.ttl}
	if w.TTL == 0 {
		w.TTL = g.ttl
	}
	for _, rr := range g.nsRecords(zone) {
		ns := rr.(*dns.NS).Ns
		w.Nameservers = append(w.Nameservers, ns)
		if !dns.IsSubDomain(zone, ns) {
			continue
		}
		for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
			answer, _, _, _ := snap.Lookup(zi, ns, qtype)
			for _, a := range answer {
				switch a := a.(type) {
				case *dns.A:
					addr, _ := netip.AddrFromSlice(a.A.To4())
					w.Glue[ns] = append(w.Glue[ns], addr)
				case *dns.AAAA:
					addr, _ := netip.AddrFromSlice(a.AAAA)
					w.Glue[ns] = append(w.Glue[ns], addr)
				}
			}
		}
		if len(w.Glue[ns]) == 0 {
			return w, ns
		}
	}
	return w, ""
}
