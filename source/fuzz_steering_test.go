package source

import (
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// FuzzSteeringAnnotations: the weight and location annotations of any
// object (a tenant writes them) give a weight ParseWeight takes or none, a
// location that reads back as itself, a warning for each value ignored and
// none for a value taken; the work is bounded: at most one warning per
// annotation, each quoting at most maxWarningValue octets of it (at most 4
// octets each once quoted), whatever its size.
func FuzzSteeringAnnotations(f *testing.F) {
	for _, s := range []struct {
		weight, location string
	}{
		{"10", "continent=EU,country=DE,region=DE-HE"},
		{"1000", "country=us region=us-east-1"},
		{"0", "continent=EU,continent=NA"},
		{"1001", "planet=earth"},
		{" 7 ", "country=DE,country=de"},
		{"-1", ""},
		{"1e3", "region=" + strings.Repeat("x", 64)},
		{strings.Repeat("9", 300), strings.Repeat("country=DE,", 40)},
		{"", "continent=EU,,country=DE"},
		{strings.Repeat("x", 10000), "region=" + strings.Repeat("y", 10000)},
	} {
		f.Add(s.weight, s.location, true, true)
	}
	f.Add("5", "", true, false)
	f.Fuzz(func(t *testing.T, weight, location string, hasWeight, hasLocation bool) {
		a := map[string]string{}
		if hasWeight {
			a[WeightAnnotation] = weight
		}
		if hasLocation {
			a[LocationAnnotation] = location
		}
		w, loc, warnings := Steering(&metav1.ObjectMeta{Annotations: a})

		if len(warnings) > len(a) {
			t.Fatalf("%d warnings for %d annotations: %q", len(warnings), len(a), warnings)
		}
		warned := func(name string) bool {
			for _, s := range warnings {
				if strings.Contains(s, name) {
					return true
				}
			}
			return false
		}
		for _, s := range warnings {
			// A quoted octet takes at most 4 (\xff): the value's octets
			// are bounded, their quoted form is at most 4 times that.
			if len(s) > 4*maxWarningValue+256 {
				t.Fatalf("a warning of %d octets: %.80q...", len(s), s)
			}
		}

		// The weight: the annotation's when valid, else none and a warning.
		if _, err := ParseWeight(strconv.Itoa(int(w))); w != 0 && err != nil {
			t.Fatalf("weight %d: %v", w, err)
		}
		want, err := ParseWeight(weight)
		valid := hasWeight && err == nil && len(weight) <= maxWarningValue
		switch {
		case valid && (w != want || warned(WeightAnnotation)):
			t.Fatalf("weight %q: got %d (warnings %q), want %d", weight, w, warnings, want)
		case !valid && w != 0:
			t.Fatalf("weight %q (set %v): got %d, want none", weight, hasWeight, w)
		case hasWeight && !valid && !warned(WeightAnnotation):
			t.Fatalf("weight %q ignored without a warning", weight)
		}

		// The location: it reads back as itself, upper case, or it is none.
		if loc.IsZero() {
			if hasLocation && !warned(LocationAnnotation) {
				t.Fatalf("location %q ignored without a warning", location)
			}
			return
		}
		if !hasLocation || warned(LocationAnnotation) || len(location) > maxWarningValue {
			t.Fatalf("location %+v from %q (set %v), warnings %q", loc, location, hasLocation, warnings)
		}
		back, err := index.ParseLocation(loc.String())
		if err != nil || back != loc {
			t.Fatalf("location %+v reads back as %+v (%v)", loc, back, err)
		}
		for _, p := range []string{loc.Continent, loc.Country, loc.Region} {
			if p != strings.ToUpper(p) {
				t.Fatalf("location part %q not upper case", p)
			}
		}
	})
}
