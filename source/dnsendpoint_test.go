package source

import (
	"strings"
	"testing"
)

func TestEndpointRecordTargets(t *testing.T) {
	for _, tc := range []struct {
		rrtype, target string
		want           string // the record, or "" for an error
		err            string // part of the error
	}{
		{"A", "192.0.2.1", "x.example.com. 60 IN A 192.0.2.1", ""},
		{"A", "2001:db8::1", "", "not an A address"},
		{"AAAA", "2001:db8::1", "x.example.com. 60 IN AAAA 2001:db8::1", ""},
		{"CNAME", "LB.example.net", "x.example.com. 60 IN CNAME lb.example.net.", ""},
		{"CNAME", "999.1.1.1", "", "all digits"},
		{"CNAME", "lb.example.123.", "", "all digits"},
		{"CNAME", "bad host", "", "character"},
		{"NS", "ns1.example.net.", "x.example.com. 60 IN NS ns1.example.net.", ""},
		{"NS", "10.0.0.1", "", "all digits"},
		{"PTR", "192.0.2.1", "", "all digits"},
		{"PTR", "host.example.com", "x.example.com. 60 IN PTR host.example.com.", ""},
		// Record data of at most 4096 octets: a TXT target of 4080 octets is
		// 16 character-strings (4096 octets with their lengths), one more is
		// too long; miekg/dns's parser refuses a CAA value or an MX target of
		// 70 KB.
		{"TXT", strings.Repeat("t", 4080), "x.example.com. 60 IN TXT" + strings.Repeat(` "`+strings.Repeat("t", 255)+`"`, 16), ""},
		{"TXT", strings.Repeat("t", 4081), "", "more than 4096"},
		{"TXT", strings.Repeat("t", 70_000), "", "more than 4096"},
		{"CAA", `0 issue "` + strings.Repeat("c", 70_000) + `"`, "", ""},
		{"MX", "10 " + strings.Repeat("m", 70_000), "", ""},
	} {
		rrs, err := endpointRecord("x.example.com.", tc.rrtype, tc.target, 60)
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %.80q: got %.80v, %.200v; want an error with %q", tc.rrtype, tc.target, rrs, err, tc.err)
			}
			continue
		}
		if err != nil || len(rrs) != 1 || strings.Join(strings.Fields(rrs[0].String()), " ") != tc.want {
			t.Errorf("%s %.80q: got %.200v, %.200v; want %.200s", tc.rrtype, tc.target, rrs, err, tc.want)
		}
	}
}
