package source

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNamespaceDomains(t *testing.T) {
	tests := []struct {
		value    string
		want     []string
		warnings int
	}{
		{"", nil, 0},
		{"team-a.example.com", []string{"team-a.example.com."}, 0},
		{"A.example.com., b.example.com  c.example.com", []string{"a.example.com.", "b.example.com.", "c.example.com."}, 0},
		{"ok.example.com,bad..example.com", []string{"ok.example.com."}, 1},
	}
	for _, tt := range tests {
		meta := &metav1.ObjectMeta{Name: "ns", Annotations: map[string]string{DomainsAnnotation: tt.value}}
		got, warnings := NamespaceDomains(meta)
		if !slices.Equal(got, tt.want) || len(warnings) != tt.warnings {
			t.Errorf("%q: got %q %q, want %q and %d warnings", tt.value, got, warnings, tt.want, tt.warnings)
		}
	}
}
