package catalog

import (
	"github.com/miekg/dns"
)

// Result is the kind of a lookup's answer.
type Result int

const (
	// Success: the answer holds the records asked for.
	Success Result = iota
	// NoData: the name exists without the type asked for (RFC 2308 §2.2).
	NoData
	// NameError: the name does not exist (NXDOMAIN).
	NameError
)

// Lookup answers a query for qname and qtype in the catalog zone: the
// records asked for, or a negative answer with the SOA in the authority
// section. qname must be at or below the catalog's name; ANY is answered
// with every record of the name (the catalog is small and read by its
// secondaries only).
func (z *Zone) Lookup(qname string, qtype uint16) (answer, ns []dns.RR, res Result) {
	owner := lowerASCII(qname)
	rrs, ok := z.names[owner]
	if !ok {
		if z.ents[owner] {
			return nil, []dns.RR{z.soa}, NoData
		}
		return nil, []dns.RR{z.soa}, NameError
	}
	for _, rr := range rrs {
		if qtype == dns.TypeANY || rr.Header().Rrtype == qtype {
			answer = append(answer, rr)
		}
	}
	if len(answer) == 0 {
		return nil, []dns.RR{z.soa}, NoData
	}
	return answer, nil, Success
}
