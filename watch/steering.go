package watch

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// steer sets the weight and location of an object's claim: its
// annotations' (source.Steering), with the cluster's (Config.Weight,
// Config.Location). The weight is the object's times the cluster's, each 1
// when unset, and stays unset when both are; the object's location wins
// over the cluster's. It returns what is wrong with the annotations.
func (c *Controller) steer(meta metav1.Object, claim *index.Claim) []string {
	weight, loc, warnings := source.Steering(meta)
	if weight != 0 || c.cfg.Weight != 0 {
		claim.Weight = max(weight, 1) * max(c.cfg.Weight, 1)
	}
	claim.Location = loc
	if loc.IsZero() {
		claim.Location = c.cfg.Location
	}
	return warnings
}
