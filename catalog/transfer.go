package catalog

import (
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/xfr"
)

// Transfer serves a transfer of the catalog: its SOA alone for an IXFR
// that is current, else the whole zone (xfr.Whole).
func (z *Zone) Transfer(serial uint32) <-chan []dns.RR {
	return xfr.Whole(z.soa, z.records, serial)
}

// serials are the last catalog built under each name in this process: its
// serial and what it held (a sum of its configuration, the serial aside).
var serials sync.Map // name → *lastBuilt

type lastBuilt struct {
	mu     sync.Mutex
	serial uint32
	sum    [sha256.Size]byte
}

// NextSerial returns the serial of the catalog cfg builds, in a process
// where catalogs of its name were built before (a reload): the last one's
// serial when cfg holds the same (its members, properties, TTL and SOA
// timers), so that a reload that changes nothing moves nothing; else
// cfg.Serial (the start), or one more than the last serial when that is not
// older (RFC 1982 arithmetic), so that a reload within the second of the last
// start still gives a larger serial.
func NextSerial(cfg Config) uint32 {
	v, _ := serials.LoadOrStore(dns.CanonicalName(cfg.Name), new(lastBuilt))
	last := v.(*lastBuilt)
	sum := configSum(cfg)
	last.mu.Lock()
	defer last.mu.Unlock()
	if last.serial != 0 && last.sum == sum {
		return last.serial
	}
	next := cfg.Serial
	if last.serial != 0 && !index.SerialLess(last.serial, next) {
		next = last.serial + 1
	}
	last.serial, last.sum = next, sum
	return next
}

// configSum sums what cfg puts in the catalog, its serial aside: the zone it
// builds, as a transfer carries it.
func configSum(cfg Config) [sha256.Size]byte {
	cfg.Serial = 0
	z := New(cfg)
	h := sha256.New()
	fmt.Fprintln(h, z.soa.String())
	for _, rr := range z.records {
		fmt.Fprintln(h, rr.String())
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
