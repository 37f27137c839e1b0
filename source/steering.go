package source

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// Annotations of traffic steering (see docs/features/traffic-steering.md), read on
// every kind.
const (
	// WeightAnnotation is the weight of an object's targets among the others
	// at the same name: an integer from 1 to MaxWeight.
	WeightAnnotation = "k8s-gateway.dns/weight"
	// LocationAnnotation is where an object's targets serve, in the form of
	// index.ParseLocation: "continent=EU,country=DE,region=DE-HE".
	LocationAnnotation = "k8s-gateway.dns/location"
	// RegionLabel is the well-known label of a cloud region, read as the
	// region of a Cluster API Cluster without a location annotation.
	RegionLabel = "topology.kubernetes.io/region"
)

// MaxWeight is the largest weight of an object or of a cluster.
const MaxWeight = 1000

// ParseWeight reads a weight, an integer from 1 to MaxWeight.
func ParseWeight(s string) (uint32, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
	if err != nil || n < 1 || n > MaxWeight {
		return 0, fmt.Errorf("weight %q: want an integer from 1 to %d", s, MaxWeight)
	}
	return uint32(n), nil
}

// Steering returns the weight (0 when unset) and the location (zero when
// unset) of an object's annotations, and what is wrong with them: an
// invalid value is ignored. A value longer than maxWarningValue octets is
// none of them (a location names each part once), and is refused unread: a
// warning never quotes more than that of an annotation.
func Steering(meta metav1.Object) (weight uint32, loc index.Location, warnings []string) {
	a := meta.GetAnnotations()
	tooLong := func(name, v string) bool {
		if len(v) <= maxWarningValue {
			return false
		}
		warnings = append(warnings, fmt.Sprintf("annotation %s: %d octets, longer than any valid value; ignored", name, len(v)))
		return true
	}
	if v, ok := a[WeightAnnotation]; ok && !tooLong(WeightAnnotation, v) {
		w, err := ParseWeight(v)
		if err != nil {
			warnings = append(warnings, "annotation "+WeightAnnotation+": "+err.Error()+"; ignored")
		}
		weight = w
	}
	if v, ok := a[LocationAnnotation]; ok && !tooLong(LocationAnnotation, v) {
		l, err := index.ParseLocation(v)
		if err != nil {
			warnings = append(warnings, "annotation "+LocationAnnotation+": "+err.Error()+"; ignored")
		}
		loc = l
	}
	return weight, loc, warnings
}
