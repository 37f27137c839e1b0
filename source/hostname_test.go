package source

import (
	"slices"
	"strings"
	"testing"
)

func TestCanonicalName(t *testing.T) {
	long63 := strings.Repeat("a", 63)
	tests := []struct {
		in       string
		wildcard bool
		want     string // "" when an error is expected
		err      string
	}{
		{in: "www.example.com", want: "www.example.com."},
		{in: " WWW.Example.COM. ", want: "www.example.com."},
		{in: "_http._tcp.example.com", want: "_http._tcp.example.com."},
		{in: "a-b.example.com", want: "a-b.example.com."},
		{in: "localhost", want: "localhost."},
		{in: long63 + ".example.com", want: long63 + ".example.com."},
		{in: "*.example.com", wildcard: true, want: "*.example.com."},
		{in: "*.example.com", err: `"*"`},
		{in: "*", wildcard: true, err: `"*"`},
		{in: "a.*.example.com", wildcard: true, err: `"*"`},
		{in: "", err: "empty name"},
		{in: " . ", err: "empty name"},
		{in: "a..example.com", err: "empty label"},
		{in: ".example.com", err: "empty label"},
		{in: "example.com..", err: "empty label"},
		{in: long63 + "a.example.com", err: "longer than 63"},
		{in: strings.Repeat("abcdefg.", 32) + "com", err: "longer than 253"},
		{in: "-a.example.com", err: "hyphen"},
		{in: "a-.example.com", err: "hyphen"},
		{in: "a b.example.com", err: `' '`},
		{in: `a\.b.example.com`, err: `'\\'`},
		{in: "ü.example.com", err: "character"},
	}
	for _, tc := range tests {
		got, err := CanonicalName(tc.in, tc.wildcard)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("canonicalName(%q, %v) = %q, %v; want %q", tc.in, tc.wildcard, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("canonicalName(%q, %v) = %q, %v; want an error containing %s", tc.in, tc.wildcard, got, err, tc.err)
		}
	}
}

func TestZoneNames(t *testing.T) {
	tests := []struct {
		host     string
		relative bool
		want     []string
		warn     string
	}{
		{host: "www.example.com", want: []string{"www.example.com."}},
		{host: "www.example.com.", want: []string{"www.example.com."}},
		{host: "www.sub.example.com", relative: true, want: []string{"www.sub.example.com."}},
		{host: "www", relative: true, want: []string{"www.example.com.", "www.sub.example.com.", "www.example.org."}},
		{host: "www.example", relative: true, want: []string{"www.example.example.com.", "www.example.sub.example.com.", "www.example.example.org."}},
		{host: "www", warn: "outside the zones"},
		{host: "www.example.net.", relative: true, warn: "outside the zones"},
		{host: "www.example.net", warn: "outside the zones"},
		{host: "*.example.com", want: []string{"*.example.com."}},
		{host: "*.app", relative: true, want: []string{"*.app.example.com.", "*.app.sub.example.com.", "*.app.example.org."}},
		{host: "*.", relative: true, warn: "invalid hostname"},
		{host: "a..b", relative: true, warn: "invalid hostname"},
	}
	for _, tc := range tests {
		var r Result
		got := zoneNames(&r, tc.host, k8sTestZones, tc.relative, "test")
		if !slices.Equal(got, tc.want) {
			t.Errorf("zoneNames(%q, relative=%v) = %q, want %q", tc.host, tc.relative, got, tc.want)
		}
		if tc.warn == "" && len(r.Warnings) > 0 || tc.warn != "" && (len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], tc.warn)) {
			t.Errorf("zoneNames(%q, relative=%v) warnings %q, want %q", tc.host, tc.relative, r.Warnings, tc.warn)
		}
	}
}
