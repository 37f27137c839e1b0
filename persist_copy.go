package gateway

import (
	"errors"
	"io/fs"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/persist"
)

// zoneCopies are the copies of the zones read from disk at startup. Until the
// informers sync, each zone is answered from its copy while the copy is
// younger than its SOA expire.
type zoneCopies struct {
	index   *index.Index  // sealed: the copies' records with their serials
	expires []time.Time   // per zone; zero when the zone has no copy
	expired []atomic.Bool // per zone: its expiry was logged
}

// loadCopies reads the copy of every zone from dir. It returns the copies to
// serve (nil when there is none) and, per zone, the serial the live index must
// start from (0 without a copy): that of the copy, served or expired, so that
// serials never go backwards across restarts. A copy that fails its checks is
// logged, naming the file, and ignored.
func (g *Gateway) loadCopies(dir string) (*zoneCopies, []uint32) {
	now := g.clock()
	copies := make([]*persist.Copy, len(g.Zones))
	serials := make([]uint32, len(g.Zones))
	found := false
	for zi, zone := range g.Zones {
		path := persist.Path(dir, zone)
		c, err := persist.Read(path, zone)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			log.Infof("persist: no copy of zone %s in %s yet", zone, dir)
			continue
		case err != nil:
			log.Errorf("persist: rejected the copy of zone %s in %s: %v; not served", zone, path, err)
			continue
		}
		serials[zi] = c.Serial
		g.copyWritten[zi].Store(c.Written.Unix())
		if !now.Before(c.Expires()) {
			log.Warningf("persist: the copy of zone %s in %s, written %s, is older than its SOA expire (%d s): not served",
				zone, path, c.Written.Format(time.RFC3339), c.SOA.Expire)
			continue
		}
		copies[zi], found = c, true
		log.Infof("persist: serving zone %s from %s (serial %d, written %s, %d records) until the informers sync",
			zone, path, c.Serial, c.Written.Format(time.RFC3339), len(c.Records)+len(c.NS)+1)
	}
	if !found {
		return nil, serials
	}
	zc := &zoneCopies{expires: make([]time.Time, len(g.Zones)), expired: make([]atomic.Bool, len(g.Zones))}
	zc.index = index.New(index.Config{
		Zones: g.Zones,
		SOA: func(zone string, serial uint32) *dns.SOA {
			if c := copies[index.ZoneOf(g.Zones, zone)]; c != nil && c.SOA.Hdr.Name == zone {
				soa := dns.Copy(c.SOA).(*dns.SOA)
				soa.Serial = serial
				return soa
			}
			return g.newSOA(zone, serial)
		},
		NS: func(zone string) []dns.RR {
			if c := copies[index.ZoneOf(g.Zones, zone)]; c != nil && c.SOA.Hdr.Name == zone {
				return c.NS
			}
			return g.nsRecords(zone)
		},
		Now:     g.now,
		Serials: serials,
	})
	for zi, c := range copies {
		if c == nil {
			continue
		}
		zc.expires[zi] = c.Expires()
		// The delegations to nested zones and their glue are the nested
		// zones' own records, from their own copies.
		var rrs []dns.RR
		for _, rr := range c.Records {
			if index.ZoneOf(g.Zones, rr.Header().Name) == zi {
				rrs = append(rrs, rr)
			}
		}
		zc.index.Update("persist/"+g.Zones[zi], rrs)
	}
	zc.index.Seal()
	return zc, serials
}

// fresh reports whether zone zi has a copy younger than its SOA expire at now,
// and logs, once, a copy that expired.
func (zc *zoneCopies) fresh(zi int, now time.Time) bool {
	exp := zc.expires[zi]
	if exp.IsZero() {
		return false
	}
	if now.Before(exp) {
		return true
	}
	if zc.expired[zi].CompareAndSwap(false, true) {
		log.Warningf("persist: the copy of zone %s reached its SOA expire at %s: answering SERVFAIL until the informers sync",
			zc.index.Snapshot().Zones()[zi], exp.Format(time.RFC3339))
	}
	return false
}

// allFresh reports whether every zone has a fresh copy at now.
func (zc *zoneCopies) allFresh(now time.Time) bool {
	for zi := range zc.expires {
		if !zc.fresh(zi, now) {
			return false
		}
	}
	return true
}
