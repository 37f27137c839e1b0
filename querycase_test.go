package gateway

import (
	"testing"

	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

func TestWithQueryCase(t *testing.T) {
	tests := []struct {
		name         string
		answer       []dns.RR
		lower, asked string
		want         []string
	}{
		{"lower case query: the records themselves", testutil.RRs("www.example.com. 60 IN A 192.0.2.1"), "www.example.com.", "www.example.com.",
			[]string{"www.example.com.\t60\tIN\tA\t192.0.2.1"}},
		{"mixed case: the owner as asked", testutil.RRs("www.example.com. 60 IN A 192.0.2.1", "www.example.com. 60 IN A 192.0.2.2"), "www.example.com.", "WWW.Example.COM.",
			[]string{"WWW.Example.COM.\t60\tIN\tA\t192.0.2.1", "WWW.Example.COM.\t60\tIN\tA\t192.0.2.2"}},
		{"a CNAME chain: only the query name's owner", testutil.RRs("alias.example.com. 60 IN CNAME www.example.com.", "www.example.com. 60 IN A 192.0.2.1"), "alias.example.com.", "ALIAS.example.com.",
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

// TestQueryName checks the fast way against request.Request.Name, the
// reference, for plain, mixed-case and escaped names.
func TestQueryName(t *testing.T) {
	for _, q := range []string{
		"www.example.com.", "WWW.Example.COM.", "*.w.example.com.", "_http._tcp.example.com.",
		"a-1.example.com.", ".", "a\\.b.example.com.", "A\\046B.example.com.", "a\\032b.example.com.",
		"\\@.example.com.", "x\\(y.example.com.", "\\255.example.com.", "a..b.example.com.",
	} {
		m := new(dns.Msg)
		m.SetQuestion(q, dns.TypeA)
		want := (&request.Request{Req: m}).Name()
		if got := queryName(&request.Request{Req: m}); got != want {
			t.Errorf("queryName(%q) = %q, want %q", q, got, want)
		}
	}
	if got := queryName(&request.Request{Req: new(dns.Msg)}); got != "." {
		t.Errorf("queryName(no question) = %q, want \".\"", got)
	}
	m := new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA)
	if n := testing.AllocsPerRun(100, func() { _ = queryName(&request.Request{Req: m}) }); n != 0 {
		t.Errorf("queryName of a lower-case name: %v allocations", n)
	}
}

// FuzzQueryName checks queryName against request.Request.Name for any
// question name, as miekg/dns unpacks it from the wire or a caller sets it.
func FuzzQueryName(f *testing.F) {
	for _, q := range []string{"www.example.com.", "WWW.Example.COM.", "a\\.b.", "\\000.", "x y.", "é.", "*._tcp.", ""} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		m := new(dns.Msg)
		m.SetQuestion(q, dns.TypeA)
		want := (&request.Request{Req: m}).Name()
		if got := queryName(&request.Request{Req: m}); got != want {
			t.Fatalf("queryName(%q) = %q, request.Name() %q", q, got, want)
		}
	})
}
