package gateway

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/metrics"
)

var (
	conflictsTotal = metrics.CounterVec("conflicts_total",
		"Counter of names whose records several objects claim with different data, by zone.",
		"zone")
	rejectedTotal = metrics.CounterVec("rejected_total",
		"Counter of claims on names that the ownership policy rejected, by zone and reason (reserved, owned, undelegated).",
		"zone", "reason")
)

// The metrics of the clusters that cluster blocks name.
var (
	clusterConflicts = metrics.CounterVec("cluster_conflicts_total",
		"Counter of names that objects of several clusters publish with conflicting records, or that the ownership policy gave to another cluster's namespace, by zone.",
		"zone")
)

// The metrics of the persist option.

// Plugins with the persist option, for the copy metric.
var persisting metrics.LiveSet[*Gateway, struct{}]

// registerCopies adds g to the copy metric until the returned function is called.
func registerCopies(g *Gateway) func() {
	return persisting.Add(g, struct{}{})
}

// zoneView labels the per-zone metrics: two views of one zone are two
// series (the view plugin's name, "" without a view).
type zoneView struct{ zone, view string }

// copyCollector exports, per zone and view, 1 while the zone is answered from
// its copy on disk (before the informers sync, until the copy's SOA expire),
// else 0; and when the copy was last written.
type copyCollector struct{ answered, written *prometheus.Desc }

func (c copyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.answered; ch <- c.written }

func (c copyCollector) Collect(ch chan<- prometheus.Metric) {
	// A zone of two instances (during a reload) is answered from a copy
	// when either answers from one, and was written when the later wrote it.
	answered, written := map[zoneView]float64{}, map[zoneView]int64{}
	persisting.Each(func(g *Gateway, _ struct{}) {
		now := g.clock()
		for zi, zone := range g.Zones {
			k := zoneView{zone, g.view}
			v := 0.0
			if !g.ready.Load() && g.persist.copies.Answering(zi, now) != nil {
				v = 1
			}
			answered[k] = max(answered[k], v)
			if at := g.persist.copies.Written(zi); at > 0 {
				written[k] = max(written[k], at)
			}
		}
	})
	for k, v := range answered {
		ch <- prometheus.MustNewConstMetric(c.answered, prometheus.GaugeValue, v, k.zone, k.view)
	}
	for k, at := range written {
		ch <- prometheus.MustNewConstMetric(c.written, prometheus.GaugeValue, float64(at), k.zone, k.view)
	}
}

func init() {
	prometheus.MustRegister(copyCollector{
		answered: metrics.Desc("copy_answered",
			"1 while a zone is answered from its copy on disk (persist): before the informers sync, until the copy's SOA expire.",
			"zone", "view"),
		written: metrics.Desc("copy_written_timestamp_seconds",
			"Unix time the copy of each zone on disk (persist) was written, as read at startup or last written.",
			"zone", "view"),
	})
}

// The size of the zones: what each running plugin instance answers.

// Running plugin instances, for the size metrics, each with the sizes of the
// last snapshot read (a scrape reads every name only when it changed).
var serving metrics.LiveSet[*Gateway, *sizeMemo]

type sizeMemo struct {
	snap  *index.Snapshot
	sizes []index.ZoneSize
}

// registerSizes adds g to the size metrics until the returned function is called.
func registerSizes(g *Gateway) func() { return serving.Add(g, &sizeMemo{}) }

// sizeCollector exports the names, records and serial of each zone and view.
// A zone of two instances of one view (a reload) reports the larger.
type sizeCollector struct{ names, records, serial *prometheus.Desc }

func (c sizeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.names
	ch <- c.records
	ch <- c.serial
}

func (c sizeCollector) Collect(ch chan<- prometheus.Metric) {
	type zoneState struct {
		index.ZoneSize
		serial uint32
	}
	largest := map[zoneView]zoneState{}
	serving.Each(func(g *Gateway, m *sizeMemo) {
		if snap := g.index.Snapshot(); snap != m.snap {
			m.snap, m.sizes = snap, snap.Sizes()
		}
		for zi, zone := range m.snap.Zones() {
			k := zoneView{zone, g.view}
			old := largest[k]
			largest[k] = zoneState{
				ZoneSize: index.ZoneSize{Names: max(old.Names, m.sizes[zi].Names), Records: max(old.Records, m.sizes[zi].Records)},
				serial:   max(old.serial, m.snap.Serial(zi)),
			}
		}
	})
	for k, z := range largest {
		ch <- prometheus.MustNewConstMetric(c.names, prometheus.GaugeValue, float64(z.Names), k.zone, k.view)
		ch <- prometheus.MustNewConstMetric(c.records, prometheus.GaugeValue, float64(z.Records), k.zone, k.view)
		ch <- prometheus.MustNewConstMetric(c.serial, prometheus.GaugeValue, float64(z.serial), k.zone, k.view)
	}
}

func init() {
	prometheus.MustRegister(sizeCollector{
		names: metrics.Desc("zone_names",
			"Names that own records in each zone (the apex SOA and NS aside, empty non-terminals not counted).",
			"zone", "view"),
		records: metrics.Desc("zone_records",
			"Records in each zone, the apex SOA and NS aside.",
			"zone", "view"),
		serial: metrics.Desc("zone_serial",
			"The SOA serial of each zone.",
			"zone", "view"),
	})
	buildInfo := metrics.GaugeVec("build_info",
		"1, labelled with the plugin's version, the CoreDNS it is built into and the Go version.",
		"version", "coredns_version", "goversion")
	buildInfo.WithLabelValues(Version, corednsVersion(), runtime.Version()).Set(1)
}

// corednsVersion is the version of the CoreDNS module in the binary, or "".
func corednsVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/coredns/coredns" {
				if m.Replace != nil {
					return m.Replace.Version
				}
				return m.Version
			}
		}
	}
	return ""
}
