package gateway

import (
	"strings"

	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
)

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

// queryName returns the query name of state in lower case, as state.Name()
// does, without its cost for the names nearly every query has: letters,
// digits, '-', '_' and '*'. Such a name needs no escaping, so it is its own
// presentation form; state.Name() reads it byte by byte through miekg/dns's
// escaping (a quarter of the handler's time) and then lowers it. Any other
// name takes that way.
func queryName(state *request.Request) string {
	if len(state.Req.Question) == 0 {
		return state.Name()
	}
	q := state.Req.Question[0].Name
	upper := false
	for i := 0; i < len(q); i++ {
		switch b := q[i]; {
		case 'a' <= b && b <= 'z', '0' <= b && b <= '9', b == '.', b == '-', b == '_', b == '*':
		case 'A' <= b && b <= 'Z':
			upper = true
		default:
			return state.Name()
		}
	}
	if upper {
		return strings.ToLower(q)
	}
	return q
}
