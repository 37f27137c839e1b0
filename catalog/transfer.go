package catalog

import (
	"sync"
	"sync/atomic"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/xfr"
)

// Transfer serves a transfer of the catalog: its SOA alone for an IXFR
// that is current, else the whole zone (xfr.Whole).
func (z *Zone) Transfer(serial uint32) <-chan []dns.RR {
	return xfr.Whole(z.soa, z.records, serial)
}

// serials are the last serials given to each catalog zone in this process,
// so that a reload within the same second still moves the serial.
var serials sync.Map // name → *atomic.Uint32

// NextSerial returns serial, or one more than the last serial NextSerial
// gave the catalog name in this process when that is not older (RFC 1982
// arithmetic): a reload that changes the members within the second of the
// last start still gives a larger serial.
func NextSerial(name string, serial uint32) uint32 {
	v, _ := serials.LoadOrStore(name, new(atomic.Uint32))
	last := v.(*atomic.Uint32)
	for {
		old := last.Load()
		next := serial
		if old != 0 && !index.SerialLess(old, serial) {
			next = old + 1
		}
		if last.CompareAndSwap(old, next) {
			return next
		}
	}
}
