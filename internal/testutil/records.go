// Package testutil holds the helpers that the tests of several packages share:
// records in presentation form, and API objects shaped as the API server
// gives them. Only tests import it.
package testutil

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// Strings returns the presentation form of rrs, sorted.
func Strings(rrs []dns.RR) []string {
	out := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		out = append(out, rr.String())
	}
	slices.Sort(out)
	return out
}

// Want parses records in zone-file form ("www.example.com. 60 IN A 192.0.2.1")
// and returns their presentation form, sorted, for comparison with Strings.
func Want(t testing.TB, lines ...string) []string {
	t.Helper()
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil || rr == nil {
			t.Fatalf("bad expected record %q: %v", l, err)
		}
		out = append(out, rr.String())
	}
	slices.Sort(out)
	return out
}

// Diff describes how got differs from want, or returns "".
func Diff(got, want []string) string {
	if slices.Equal(got, want) {
		return ""
	}
	return fmt.Sprintf("got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
}

// CheckWarnings checks that every substring in want occurs in some warning,
// and that there are no warnings when want is empty.
func CheckWarnings(t *testing.T, got, want []string) {
	t.Helper()
	if len(want) == 0 && len(got) > 0 {
		t.Errorf("unexpected warnings: %q", got)
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("no warning contains %q; warnings: %q", w, got)
		}
	}
}
