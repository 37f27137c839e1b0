package fleet

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// steering is the weight and location a workload cluster is read with
// (docs/traffic-steering.md); a zero part is unset.
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

// steeringOf reads the weight and location of a Cluster: the annotations
// source.WeightAnnotation and source.LocationAnnotation, else, for the
// region, the label source.RegionLabel. An invalid value is logged once
// and ignored.
func (d *Discovery) steeringOf(key string, obj metav1.Object) steering {
	var s steering
	if v, ok := obj.GetAnnotations()[source.WeightAnnotation]; ok {
		w, err := source.ParseWeight(v)
		if err != nil {
			d.warn(key, "annotation "+source.WeightAnnotation+": "+err.Error()+"; ignored")
		}
		s.weight = w
	}
	if v, ok := obj.GetAnnotations()[source.LocationAnnotation]; ok {
		l, err := index.ParseLocation(v)
		if err != nil {
			d.warn(key, "annotation "+source.LocationAnnotation+": "+err.Error()+"; ignored")
		}
		s.location = l
	} else if r := strings.TrimSpace(obj.GetLabels()[source.RegionLabel]); r != "" {
		if l, err := index.ParseLocation("region=" + r); err == nil {
			s.location = l
		}
	}
	return s
}
