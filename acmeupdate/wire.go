package acmeupdate

import (
	"strings"

	"github.com/miekg/dns"
)

// The dns package hands the plugin a parsed message, not the bytes it came
// in, and a TSIG MAC covers those bytes. Packing the message again gives the
// same bytes but for name compression, which each client does its own way
// (BIND's nsupdate leaves some names whole that it could point to, the dns
// package's clients compress nothing or everything). wireEncodings rebuilds
// the candidates: every choice, for each owner name, between writing it
// whole and pointing to an earlier occurrence of one of its suffixes.

// maxEncodings bounds the candidates tried for one message (each costs an
// HMAC); a message whose encoding is not among them gets BADSIG.
const maxEncodings = 256

// piece is a part of the message: an owner name (compressible) followed by
// fixed bytes.
type piece struct {
	name  []byte // wire form, uncompressed; nil for none
	fixed []byte
}

// wireEncodings calls try with candidate encodings of r, TSIG included,
// until try returns true, and reports whether one did: the message without
// compression, then the choices name by name, each name's longest pointer
// first (which is how the dns package and most servers compress).
func wireEncodings(r *dns.Msg, try func([]byte) bool) bool {
	pieces, ok := messagePieces(r)
	if !ok {
		return false
	}
	// First as the dns package's clients (lego, cert-manager) send it: no
	// compression at all, the candidate the search below would reach last.
	var whole []byte
	for _, p := range pieces {
		whole = append(append(whole, p.name...), p.fixed...)
	}
	if try(whole) {
		return true
	}
	n := 0
	var walk func(i int, buf []byte, table map[string]int) bool
	walk = func(i int, buf []byte, table map[string]int) bool {
		if i == len(pieces) {
			n++
			return try(buf)
		}
		p := pieces[i]
		for _, cut := range cuts(p.name, table) {
			if n >= maxEncodings {
				return false
			}
			next, t := writeName(buf, p.name, cut, table)
			if walk(i+1, append(next, p.fixed...), t) {
				return true
			}
		}
		return false
	}
	return walk(0, nil, map[string]int{})
}

// messagePieces splits r into pieces: the header, the question, then each
// record, the TSIG last (its name is never compressed: the MAC leaves it out).
func messagePieces(r *dns.Msg) ([]piece, bool) {
	m := wireCopy(r)
	m.Compress = false
	full, err := m.Pack()
	if err != nil || len(full) < 12 {
		return nil, false
	}
	pieces := []piece{{fixed: full[:12]}}
	for _, q := range r.Question {
		name, ok := packName(q.Name)
		if !ok {
			return nil, false
		}
		pieces = append(pieces, piece{name: name, fixed: []byte{byte(q.Qtype >> 8), byte(q.Qtype), byte(q.Qclass >> 8), byte(q.Qclass)}})
	}
	for _, section := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range section {
			buf := make([]byte, dns.Len(rr)+256)
			off, err := dns.PackRR(rr, buf, 0, nil, false)
			if err != nil {
				return nil, false
			}
			name, ok := packName(rr.Header().Name)
			if !ok || len(name) > off {
				return nil, false
			}
			if rr.Header().Rrtype == dns.TypeTSIG || hasRdataNames(rr) {
				pieces = append(pieces, piece{fixed: buf[:off]})
				continue
			}
			pieces = append(pieces, piece{name: name, fixed: buf[len(name):off]})
		}
	}
	return pieces, true
}

// hasRdataNames reports whether rr's data holds names a client may compress
// (RFC 3597 §4): those are left as the dns package packs them.
func hasRdataNames(rr dns.RR) bool {
	if rr.Header().Rdlength == 0 {
		return false
	}
	switch rr.Header().Rrtype {
	case dns.TypeNS, dns.TypeCNAME, dns.TypePTR, dns.TypeMX, dns.TypeSOA, dns.TypeMB, dns.TypeMG, dns.TypeMR, dns.TypeMINFO, dns.TypeMD, dns.TypeMF:
		return true
	}
	return false
}

func packName(name string) ([]byte, bool) {
	buf := make([]byte, 256)
	off, err := dns.PackDomainName(name, buf, 0, nil, false)
	if err != nil {
		return nil, false
	}
	return buf[:off], true
}

// labelStarts returns the offsets of the labels of a wire name, the root's last.
func labelStarts(name []byte) []int {
	var out []int
	for i := 0; i < len(name); i += int(name[i]) + 1 {
		out = append(out, i)
		if name[i] == 0 {
			break
		}
	}
	return out
}

// cuts returns where name may be cut for a pointer, longest match first,
// len(name) standing for no pointer (written whole).
func cuts(name []byte, table map[string]int) []int {
	if name == nil {
		return []int{0}
	}
	var out []int
	for _, at := range labelStarts(name) {
		if name[at] == 0 {
			break
		}
		if _, ok := table[strings.ToLower(string(name[at:]))]; ok {
			out = append(out, at)
		}
	}
	return append(out, len(name))
}

// writeName appends name to buf, its labels from cut on as a pointer (cut ==
// len(name): whole), and returns the buffer and the table of suffixes with
// those now written.
func writeName(buf, name []byte, cut int, table map[string]int) ([]byte, map[string]int) {
	if name == nil {
		return buf, table
	}
	t := make(map[string]int, len(table)+4)
	for k, v := range table {
		t[k] = v
	}
	start := len(buf)
	for _, at := range labelStarts(name) {
		if at >= cut || name[at] == 0 {
			break
		}
		key := strings.ToLower(string(name[at:]))
		if _, ok := t[key]; !ok && start+at < 0x4000 {
			t[key] = start + at
		}
	}
	if cut == len(name) {
		return append(buf, name...), t
	}
	buf = append(buf, name[:cut]...)
	ptr := t[strings.ToLower(string(name[cut:]))]
	return append(buf, byte(0xC0|ptr>>8), byte(ptr)), t
}
