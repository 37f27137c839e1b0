package persist

import (
	"errors"
	"io/fs"
	"slices"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// Copies are the copies of a block's zones in one directory: those read at
// startup, which the plugin answers until its informers sync, each zone
// while its copy is younger than its SOA expire; and when each copy on disk
// was last written.
type Copies struct {
	dir   string
	zones []string
	// served holds the copies read (sealed, with their serials) until Live;
	// nil without any.
	served  atomic.Pointer[index.Index]
	expires []time.Time   // per zone; zero when the zone has no copy
	expired []atomic.Bool // per zone: its expiry was logged
	written []atomic.Int64
}

// LoadConfig says which copies Load reads and how the zones without one
// are made.
type LoadConfig struct {
	Dir   string
	Zones []string
	// SOA and NS are those of the block, for a zone without its copy.
	SOA func(zone string, serial uint32) *dns.SOA
	NS  func(zone string) []dns.RR
	// Now is the clock of the serials and of the copies' age; time.Now
	// when nil.
	Now func() time.Time
}

// Load reads the copy of every zone from cfg.Dir. It returns the copies and,
// per zone, the serial the live index must start from (0 without a copy):
// that of the copy, served or expired, so that serials never go backwards
// across restarts. A copy that fails its checks is logged, naming the file,
// and ignored.
func Load(cfg LoadConfig) (*Copies, []uint32) {
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	at := now()
	zones := cfg.Zones
	c := &Copies{dir: cfg.Dir, zones: zones, expires: make([]time.Time, len(zones)), expired: make([]atomic.Bool, len(zones)), written: make([]atomic.Int64, len(zones))}
	copies := make([]*zoneCopy, len(zones))
	serials := make([]uint32, len(zones))
	found := false
	for zi, zone := range zones {
		path := Path(cfg.Dir, zone)
		cp, err := readCopy(path, zone)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			log.Infof("persist: no copy of zone %s in %s yet", zone, cfg.Dir)
			continue
		case err != nil:
			log.Errorf("persist: rejected the copy of zone %s in %s: %v; not served", zone, path, err)
			continue
		}
		serials[zi] = cp.Serial
		c.written[zi].Store(cp.Written.Unix())
		if !at.Before(cp.expires()) {
			log.Warningf("persist: the copy of zone %s in %s, written %s, is older than its SOA expire (%d s): not served",
				zone, path, cp.Written.Format(time.RFC3339), cp.SOA.Expire)
			continue
		}
		copies[zi], found = cp, true
		log.Infof("persist: serving zone %s from %s (serial %d, written %s, %d records) until the informers sync",
			zone, path, cp.Serial, cp.Written.Format(time.RFC3339), len(cp.Records)+len(cp.NS)+1)
	}
	if !found {
		return c, serials
	}
	ix := index.New(index.Config{
		Zones: zones,
		SOA: func(zone string, serial uint32) *dns.SOA {
			if cp := copies[index.ZoneOf(zones, zone)]; cp != nil && cp.SOA.Hdr.Name == zone {
				soa := dns.Copy(cp.SOA).(*dns.SOA)
				soa.Serial = serial
				return soa
			}
			return cfg.SOA(zone, serial)
		},
		NS: func(zone string) []dns.RR {
			if cp := copies[index.ZoneOf(zones, zone)]; cp != nil && cp.SOA.Hdr.Name == zone {
				return cp.NS
			}
			return cfg.NS(zone)
		},
		Now:     cfg.Now,
		Serials: serials,
	})
	for zi, cp := range copies {
		if cp == nil {
			continue
		}
		c.expires[zi] = cp.expires()
		// The delegations to nested zones and their glue are the nested
		// zones' own records, from their own copies.
		var rrs []dns.RR
		for _, rr := range cp.Records {
			if index.ZoneOf(zones, rr.Header().Name) == zi {
				rrs = append(rrs, rr)
			}
		}
		ix.Update("persist/"+zones[zi], rrs)
	}
	ix.Seal()
	c.served.Store(ix)
	return c, serials
}

// Dir returns the directory of the copies.
func (c *Copies) Dir() string { return c.dir }

// Answering returns the snapshot zone zi is answered from before the
// informers sync: the copies', while the zone's copy is younger than its
// SOA expire at now; nil when it has none, or after Live. A copy that
// expired is logged once.
func (c *Copies) Answering(zi int, now time.Time) *index.Snapshot {
	ix := c.served.Load()
	if ix == nil || !c.fresh(zi, now) {
		return nil
	}
	return ix.Snapshot()
}

// AllFresh reports whether every zone is answered from its copy at now.
func (c *Copies) AllFresh(now time.Time) bool {
	if c.served.Load() == nil {
		return false
	}
	for zi := range c.expires {
		if !c.fresh(zi, now) {
			return false
		}
	}
	return true
}

// fresh reports whether zone zi has a copy younger than its SOA expire at
// now, and logs, once, a copy that expired.
func (c *Copies) fresh(zi int, now time.Time) bool {
	exp := c.expires[zi]
	if exp.IsZero() {
		return false
	}
	if now.Before(exp) {
		return true
	}
	if c.expired[zi].CompareAndSwap(false, true) {
		log.Warningf("persist: the copy of zone %s reached its SOA expire at %s: answering SERVFAIL until the informers sync",
			c.zones[zi], exp.Format(time.RFC3339))
	}
	return false
}

// Live ends the answers from the copies: the informers have synced.
func (c *Copies) Live() {
	if ix := c.served.Swap(nil); ix != nil {
		ix.Close()
		log.Infof("persist: switched from the copies on disk to live data")
	}
}

// Written returns the Unix time the copy of zone zi on disk was written (as
// read at startup or last written); 0 without one.
func (c *Copies) Written(zi int) int64 { return c.written[zi].Load() }

// SetWritten records that the copy of zone was written at at (a Writer's
// onWritten).
func (c *Copies) SetWritten(zone string, at time.Time) {
	if zi := slices.Index(c.zones, zone); zi >= 0 {
		c.written[zi].Store(at.Unix())
	}
}
