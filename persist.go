package gateway

import (
	"github.com/seed-e581d630/k8s_gateway/persist"
)

// persistFeature is the persist option: the zones' copies on disk, answered
// after a restart until the informers sync, and kept fresh (package
// persist). The directory is claimed per Corefile (setup_pairs.go).
type persistFeature struct {
	dir string // "" without the option
	// copies are those read from dir (buildIndex); nil without the option.
	copies *persist.Copies
	// unregisterCopies takes the plugin off the copy metric (metrics.go).
	unregisterCopies func()
}

// register adds g to the copy metric until unregister.
func (f *persistFeature) register(g *Gateway) {
	if f.copies != nil {
		f.unregisterCopies = registerCopies(g)
	}
}

func (f *persistFeature) unregister() {
	if f.unregisterCopies != nil {
		f.unregisterCopies()
		f.unregisterCopies = nil
	}
}

// writer returns the runner that writes the live zones to their copies once
// published is closed (the informers have synced), or nil without the
// option.
func (f *persistFeature) writer(g *Gateway, published <-chan struct{}) runner {
	if f.copies == nil {
		return nil
	}
	w := persist.NewWriter(f.dir, g.Zones, g.timing.persist, g.clock, g.index.Snapshot, f.copies.SetWritten)
	return func(stop <-chan struct{}) {
		select {
		case <-published:
			w.Run(stop)
		case <-stop:
		}
	}
}
