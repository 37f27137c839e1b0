package gateway

import (
	"slices"

	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
)

// checkRequest checks, once, a request for a zone of the block (or its
// catalog) whose apex is apex, before any answer is looked up: the OPT
// records, the ECS option, the opcode, transfers and the class. done says
// that the request is answered: written here, or with rcode for CoreDNS
// to write.
func checkRequest(w dns.ResponseWriter, r *dns.Msg, state *request.Request, qname, apex string) (rcode int, done bool) {
	switch {
	case moreThanOneOPT(r):
		// RFC 6891 §6.1.1: FORMERR. CoreDNS reads only the first OPT record.
		// The reply carries no OPT, as Knot's and BIND's: which one would it
		// echo? CoreDNS's writer adds the request's first OPT to a reply that
		// has none, so the request loses its OPT records first.
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeFormatError)
		r.Extra = slices.DeleteFunc(r.Extra, func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeOPT })
		w.WriteMsg(m)
		return dns.RcodeSuccess, true // written: CoreDNS must not write another
	case badSubnet(r):
		// RFC 7871 §6: FORMERR. CoreDNS's writer gives the reply the
		// request's OPT without its ECS option, as BIND's.
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeFormatError)
		w.WriteMsg(m)
		return dns.RcodeSuccess, true
	case r.Opcode != dns.OpcodeQuery:
		// UPDATE too: the updates option reads them on its own address
		// (package acmeupdate), never through CoreDNS.
		return dns.RcodeNotImplemented, true
	}
	if qtype := state.QType(); qtype == dns.TypeAXFR || qtype == dns.TypeIXFR {
		return refuseTransfer(w, r, qname, apex), true
	}
	if c := state.QClass(); c != dns.ClassINET && c != dns.ClassANY {
		return dns.RcodeRefused, true
	}
	return 0, false
}

// refuseTransfer answers a zone transfer that reaches the plugin: the
// transfer plugin, when configured, serves the zones' own. A name below an
// apex is no zone of this server: NOTAUTH (RFC 5936 §2.2.1), as BIND and Knot
// answer, written here (CoreDNS writes only SERVFAIL, REFUSED, FORMERR and
// NOTIMP for a plugin). A transfer of the zone itself is REFUSED: no transfer
// plugin, or one that does not serve it.
func refuseTransfer(w dns.ResponseWriter, r *dns.Msg, qname, apex string) int {
	if qname == apex {
		return dns.RcodeRefused
	}
	m := new(dns.Msg)
	m.SetRcode(r, dns.RcodeNotAuth)
	w.WriteMsg(m)
	return dns.RcodeNotAuth
}

// moreThanOneOPT reports whether a request carries two OPT records or more.
func moreThanOneOPT(r *dns.Msg) bool {
	n := 0
	for _, rr := range r.Extra {
		if rr.Header().Rrtype == dns.TypeOPT {
			n++
		}
	}
	return n > 1
}

// writeAuthoritative writes an authoritative answer of answer and ns, with
// NXDOMAIN when nxdomain, the answer's owner names in the query's case.
func writeAuthoritative(w dns.ResponseWriter, r *dns.Msg, qname string, answer, ns []dns.RR, nxdomain bool) (int, error) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	m.Answer, m.Ns = withQueryCase(answer, qname, r.Question[0].Name), ns
	if nxdomain {
		m.Rcode = dns.RcodeNameError
	}
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}
