package gateway

import (
	"testing"

	"github.com/miekg/dns"
)

func TestWithQueryCase(t *testing.T) {
	tests := []struct {
		name         string
		answer       []dns.RR
		lower, asked string
		want         []string
	}{
		{"lower case query: the records themselves", qtRRs("www.example.com. 60 IN A 192.0.2.1"), "www.example.com.", "www.example.com.",
			[]string{"www.example.com.\t60\tIN\tA\t192.0.2.1"}},
		{"mixed case: the owner as asked", qtRRs("www.example.com. 60 IN A 192.0.2.1", "www.example.com. 60 IN A 192.0.2.2"), "www.example.com.", "WWW.Example.COM.",
			[]string{"WWW.Example.COM.\t60\tIN\tA\t192.0.2.1", "WWW.Example.COM.\t60\tIN\tA\t192.0.2.2"}},
		{"a CNAME chain: only the query name's owner", qtRRs("alias.example.com. 60 IN CNAME www.example.com.", "www.example.com. 60 IN A 192.0.2.1"), "alias.example.com.", "ALIAS.example.com.",
			[]string{"ALIAS.example.com.\t60\tIN\tCNAME\twww.example.com.", "www.example.com.\t60\tIN\tA\t192.0.2.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.answer[0].String()
			got := withQueryCase(tt.answer, tt.lower, tt.asked)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d records, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i].String() != tt.want[i] {
					t.Errorf("record %d: got %q, want %q", i, got[i], tt.want[i])
				}
			}
			if tt.answer[0].String() != before {
				t.Errorf("the shared record changed: %q", tt.answer[0])
			}
		})
	}
}
