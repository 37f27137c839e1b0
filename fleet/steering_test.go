package fleet

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// TestSteeringOf: a Cluster's weight and location are its annotations, read
// as an object's; the region label stands in for a missing location
// annotation, never for an invalid one; an invalid value is warned of and
// ignored.
func TestSteeringOf(t *testing.T) {
	de := func(s string) index.Location {
		l, err := index.ParseLocation(s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		labels      map[string]string
		want        steering
		warned      string
	}{
		{"none", nil, nil, steering{}, ""},
		{"annotations", map[string]string{"k8s-gateway.dns/weight": "5", "k8s-gateway.dns/location": "country=DE"}, nil,
			steering{5, de("country=DE")}, ""},
		{"region label", nil, map[string]string{"topology.kubernetes.io/region": " eu-west-1 "}, steering{0, de("region=eu-west-1")}, ""},
		{"annotation over the label", map[string]string{"k8s-gateway.dns/location": "continent=EU"}, map[string]string{"topology.kubernetes.io/region": "us-east-1"},
			steering{0, de("continent=EU")}, ""},
		{"invalid weight", map[string]string{"k8s-gateway.dns/weight": "0"}, nil, steering{},
			`annotation k8s-gateway.dns/weight: weight "0": want an integer from 1 to 1000; ignored`},
		{"invalid location: no label either", map[string]string{"k8s-gateway.dns/location": "planet=mars"}, map[string]string{"topology.kubernetes.io/region": "us-east-1"},
			steering{}, "annotation k8s-gateway.dns/location: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Discovery{warned: map[string]string{}}
			obj := &metav1.ObjectMeta{Name: "c", Namespace: "ns", Annotations: tc.annotations, Labels: tc.labels}
			if got := d.steeringOf("ns/c", obj); got != tc.want {
				t.Errorf("steering %+v, want %+v", got, tc.want)
			}
			if w := d.warned["ns/c"]; (tc.warned == "") != (w == "") || len(w) < len(tc.warned) || w[:len(tc.warned)] != tc.warned {
				t.Errorf("warned %q, want %q", w, tc.warned)
			}
		})
	}
}
