package gateway

import "github.com/miekg/dns"

// withQueryCase gives the answer records owned by the query name the case
// the client asked with, as BIND and Knot do (RFC 4343 §4.1: case is
// preserved where it is copied from the query). lower is the query name in
// lower case, as the index knows names; asked is the name as it came. The
// index's records are shared by every query, so the renamed ones are copies;
// a query in lower case, nearly all of them, costs nothing.
func withQueryCase(answer []dns.RR, lower, asked string) []dns.RR {
	if lower == asked {
		return answer
	}
	out := make([]dns.RR, len(answer))
	for i, rr := range answer {
		if rr.Header().Name != lower {
			out[i] = rr
			continue
		}
		rr = dns.Copy(rr)
		rr.Header().Name = asked
		out[i] = rr
	}
	return out
}
