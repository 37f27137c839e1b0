package harness

import "testing"

func TestNoTests(t *testing.T) {
	for _, tc := range []struct {
		list, run string
		want      bool
	}{
		{"", "", false},
		{"", "TestGateway", false},
		{"", "^$", true},
		{".", "", true},
		{"^TestFleet", "TestGateway", true},
	} {
		if got := noTests(tc.list, tc.run); got != tc.want {
			t.Errorf("noTests(list %q, run %q) = %v, want %v", tc.list, tc.run, got, tc.want)
		}
	}
}

// The flags of this very test binary: it runs tests, so NoTests is false.
func TestNoTestsFlags(t *testing.T) {
	if NoTests() {
		t.Errorf("NoTests() = true in a binary running tests (-test.run %q)", flagValue("test.run"))
	}
}
