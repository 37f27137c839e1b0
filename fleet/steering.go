package fleet

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// steering is the weight and location a workload cluster is read with
// (docs/features/traffic-steering.md); a zero part is unset.
type steering struct {
	weight   uint32
	location index.Location
}

func steerOf(cfg watch.Config) steering { return steering{cfg.Weight, cfg.Location} }

// set gives cfg the weight and location of s.
func (s steering) set(cfg *watch.Config) { cfg.Weight, cfg.Location = s.weight, s.location }

// over returns s with the parts it does not set taken from base.
func (s steering) over(base steering) steering {
	if s.weight == 0 {
		s.weight = base.weight
	}
	if s.location.IsZero() {
		s.location = base.location
	}
	return s
}

// steeringOf reads the weight and location of a Cluster: its annotations,
// as an object's (source.Steering), else, for the region, the label
// source.RegionLabel. An invalid value is logged once and ignored.
func (d *Discovery) steeringOf(key string, obj metav1.Object) steering {
	var s steering
	var warnings []string
	s.weight, s.location, warnings = source.Steering(obj)
	for _, w := range warnings {
		d.warn(key, w)
	}
	if _, ok := obj.GetAnnotations()[source.LocationAnnotation]; !ok {
		if r := strings.TrimSpace(obj.GetLabels()[source.RegionLabel]); r != "" {
			if l, err := index.ParseLocation("region=" + r); err == nil {
				s.location = l
			}
		}
	}
	return s
}
