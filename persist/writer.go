package persist

import (
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/plog"
)

// log is the plugin's logger: every line carries plugin/k8s_gateway:.
var log = plog.Log

// Timing is when the copies on disk are written.
type Timing struct {
	// Interval is how often the writer looks for zones whose serial changed:
	// a zone is written at most once per interval.
	Interval time.Duration
	// Refresh is how old a copy may get before it is written again without
	// a change, so that its write time tells when its data was last known
	// to be live, not when the zone last changed.
	Refresh time.Duration
}

// Writer writes the live zones to their copies on disk, off the query
// path: a zone whose serial changed at most once per interval, and every
// zone at least once per refresh. It spends at most a tenth of its time
// writing: after a round that took d, the next comes 10·d later at the
// earliest (a zone of 100,000 names takes about 0.4 s).
type persister struct {
	dir      string
	zones    []string
	timing   Timing
	now      func() time.Time
	snapshot func() *index.Snapshot
	// onWritten, when set, is told of each copy written.
	onWritten func(zone string, at time.Time)

	written   []uint32    // per zone, the serial of its copy on disk
	writtenAt []time.Time // per zone, when it was written; zero: never
	failed    []string    // per zone, the last error logged
}

// NewWriter returns a writer of the copies of zones in dir: now is its
// clock, snapshot gives the live zones, and onWritten (optional) is told of
// each copy written.
func NewWriter(dir string, zones []string, t Timing, now func() time.Time, snapshot func() *index.Snapshot, onWritten func(zone string, at time.Time)) *persister {
	return &persister{
		dir: dir, zones: zones, timing: t, now: now, snapshot: snapshot, onWritten: onWritten,
		written:   make([]uint32, len(zones)),
		writtenAt: make([]time.Time, len(zones)),
		failed:    make([]string, len(zones)),
	}
}

// Run writes the zones that are due every interval until stop is closed,
// and then once more.
func (p *persister) Run(stop <-chan struct{}) {
	tick := time.NewTicker(p.timing.Interval)
	defer tick.Stop()
	var resume time.Time // no round before
	round := func() {
		start := time.Now()
		p.writeDue()
		resume = start.Add(10 * time.Since(start))
	}
	round()
	for {
		select {
		case <-stop:
			p.writeDue()
			return
		case <-tick.C:
			if time.Now().After(resume) {
				round()
			}
		}
	}
}

// writeDue writes the copy of every zone whose serial changed since it was
// last written, or whose copy is older than refresh. It never replaces a
// copy with a newer serial (another instance's, during a reload).
func (p *persister) writeDue() {
	s := p.snapshot()
	now := p.now()
	for zi, zone := range p.zones {
		serial := s.Serial(zi)
		if serial == p.written[zi] && now.Sub(p.writtenAt[zi]) < p.timing.Refresh {
			continue
		}
		path := Path(p.dir, zone)
		if onDisk, err := SerialOf(path); err == nil && index.SerialLess(serial, onDisk) {
			p.written[zi], p.writtenAt[zi] = serial, now
			log.Debugf("persist: %s has serial %d, newer than %d: not replaced", path, onDisk, serial)
			continue
		}
		soa := s.SOA(zi)[0].(*dns.SOA)
		records := append(append([]dns.RR{}, s.NS(zi)...), s.Records(zi)...)
		if err := Write(path, zone, soa, records, now); err != nil {
			if msg := err.Error(); msg != p.failed[zi] {
				p.failed[zi] = msg
				log.Errorf("persist: writing the copy of zone %s: %v; retrying every %s", zone, err, p.timing.Interval)
			}
			continue
		}
		if p.failed[zi] != "" {
			log.Infof("persist: wrote the copy of zone %s to %s again", zone, path)
			p.failed[zi] = ""
		}
		p.written[zi], p.writtenAt[zi] = serial, now
		if p.onWritten != nil {
			p.onWritten(zone, now)
		}
	}
}
