//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// The comparison of TestDifferential: one request sent to the plugin and to
// Knot, both replies reduced to a canonical text (header flags, question,
// EDNS, and each section as a set of records with their TTLs), the
// documented allowed differences forgiven, and anything else reported with
// both replies in full.

// diffFlags is how a query is sent: transport, EDNS and header bits.
type diffFlags struct {
	label  string
	tcp    bool
	edns   bool
	size   uint16 // EDNS UDP payload size
	do     bool
	rd, cd bool
	// For the randomized campaign (differential_random_test.go).
	ad, z   bool
	version uint8       // EDNS version
	opts    []dns.EDNS0 // EDNS options
}

// diffFlagSets are the ways every question of the matrix is asked.
var diffFlagSets = []diffFlags{
	{label: "edns", edns: true, size: 1232},
	{label: "noedns"},
	{label: "do", edns: true, size: 1232, do: true},
	{label: "tcp", tcp: true, edns: true, size: 1232},
	{label: "rd", edns: true, size: 1232, rd: true},
	{label: "cd", edns: true, size: 1232, cd: true},
	{label: "edns512", edns: true, size: 512}, // the smallest payload: large answers truncate
	// As dig asks: a client cookie (RFC 7873), which the plugin does not
	// echo, so it takes no room from the reply.
	{label: "cookie512", edns: true, size: 512, opts: []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0123456789abcdef"}}},
}

// diffQuery is one request of the matrix.
type diffQuery struct {
	name   string
	qtype  uint16
	qclass uint16 // 0 is IN
	flags  diffFlags
	// For IXFR: the client's SOA (RFC 1995 §3), with this serial.
	ixfrSOA bool
	serial  uint32
}

func (q diffQuery) String() string {
	class := ""
	if q.qclass != 0 && q.qclass != dns.ClassINET {
		class = dns.Class(q.qclass).String() + " "
	}
	return fmt.Sprintf("%s %s%s [%s]", q.name, class, dns.Type(q.qtype), q.flags.label)
}

// msg builds the request. SetQuestion sets RD: it is cleared unless asked for.
func (q diffQuery) msg() *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(q.name, q.qtype)
	if q.qclass != 0 {
		m.Question[0].Qclass = q.qclass
	}
	if q.ixfrSOA {
		m.Ns = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: q.name, Rrtype: dns.TypeSOA, Class: dns.ClassINET},
			Ns: "ns.", Mbox: "host.", Serial: q.serial}}
	}
	m.RecursionDesired = q.flags.rd
	m.CheckingDisabled = q.flags.cd
	m.AuthenticatedData = q.flags.ad
	m.Zero = q.flags.z
	if q.flags.edns {
		m.SetEdns0(q.flags.size, q.flags.do)
		opt := m.IsEdns0()
		opt.SetVersion(q.flags.version)
		opt.Option = append(opt.Option, q.flags.opts...)
	}
	return m
}

// exchange sends m to 127.0.0.1:port and returns the reply; a UDP request
// that gets no reply (lost on a loaded machine) is sent once more.
func exchange(port int, m *dns.Msg, tcp bool) (*dns.Msg, error) {
	return exchangeLossy(port, m, tcp, false)
}

// exchangeLossy is exchange; with lossy, a UDP request without a reply the
// second time is a nil reply, not an error (a server may drop a request).
func exchangeLossy(port int, m *dns.Msg, tcp, lossy bool) (*dns.Msg, error) {
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	if tcp {
		c.Net = "tcp"
	}
	if lossy {
		c.Timeout = time.Second
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	r, _, err := c.Exchange(m, addr)
	if err != nil && !tcp {
		r, _, err = c.Exchange(m, addr)
	}
	var ne net.Error
	if lossy && errors.As(err, &ne) && ne.Timeout() {
		return nil, nil
	}
	return r, err
}

// zoneRRsets are the RRsets of a zone transfer, by lower-case owner and
// type, each as its sorted canonical records.
type zoneRRsets map[string][]string

func rrsetKey(name string, rrtype uint16) string {
	return strings.ToLower(name) + " " + dns.Type(rrtype).String()
}

// newZoneRRsets indexes the records of an AXFR (the closing SOA excluded).
func newZoneRRsets(axfr []dns.RR) zoneRRsets {
	z := zoneRRsets{}
	for _, rr := range axfr[:len(axfr)-1] {
		k := rrsetKey(rr.Header().Name, rr.Header().Rrtype)
		z[k] = append(z[k], canonicalRR(rr, true))
	}
	for k := range z {
		slices.Sort(z[k])
	}
	return z
}

// canonicalRR is the record's presentation, whitespace folded; with lower,
// the owner in lower case (for looking up the zone's data).
func canonicalRR(rr dns.RR, lower bool) string {
	if lower {
		rr = dns.Copy(rr)
		rr.Header().Name = strings.ToLower(rr.Header().Name)
	}
	return strings.Join(strings.Fields(rr.String()), " ")
}

// renderReply is the canonical text of a reply that the comparison diffs:
// opcode, rcode and header bits; the question; EDNS presence, version, DO
// and options (the advertised payload size is left out: each server states
// its own); and the sections as sets of records, except that the CNAMEs
// leading the answer keep their order (a chain comes first, in order).
func renderReply(m *dns.Msg) []string {
	if m == nil {
		return []string{diffNoReply}
	}
	var flags []string
	for _, f := range []struct {
		on   bool
		name string
	}{{m.Response, "qr"}, {m.Authoritative, "aa"}, {m.Truncated, "tc"}, {m.RecursionDesired, "rd"},
		{m.RecursionAvailable, "ra"}, {m.Zero, "z"}, {m.AuthenticatedData, "ad"}, {m.CheckingDisabled, "cd"}} {
		if f.on {
			flags = append(flags, f.name)
		}
	}
	out := []string{fmt.Sprintf("opcode %s rcode %s flags [%s]", dns.OpcodeToString[m.Opcode], dns.RcodeToString[m.Rcode], strings.Join(flags, " "))}
	for _, q := range m.Question {
		out = append(out, "question: "+strings.Join(strings.Fields(q.String()), " "))
	}
	if opt := m.IsEdns0(); opt != nil {
		var opts []string
		for _, o := range opt.Option {
			opts = append(opts, fmt.Sprintf("%d:%s", o.Option(), o.String()))
		}
		out = append(out, fmt.Sprintf("edns: version %d do %v options [%s]", opt.Version(), opt.Do(), strings.Join(opts, ", ")))
	} else {
		out = append(out, "edns: none")
	}
	for _, s := range []struct {
		name string
		rrs  []dns.RR
	}{{"answer", m.Answer}, {"authority", m.Ns}, {"additional", m.Extra}} {
		for _, rr := range renderSection(s.rrs, s.name == "answer") {
			out = append(out, s.name+": "+rr)
		}
	}
	return out
}

// renderSection returns the records of a section (OPT excluded), sorted; with
// chain, the CNAMEs at the head of the section stay first, in their order.
func renderSection(rrs []dns.RR, chain bool) []string {
	var head, rest []string
	leading := chain
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		s := canonicalRR(rr, false)
		if leading && rr.Header().Rrtype == dns.TypeCNAME {
			head = append(head, s)
			continue
		}
		leading = false
		rest = append(rest, s)
	}
	slices.Sort(rest)
	return append(head, rest...)
}

// diffReplies returns "" when the two replies are the same, else both, with
// the lines only one of them has marked.
func diffReplies(plugin, knot []string) string {
	if slices.Equal(plugin, knot) {
		return ""
	}
	var b strings.Builder
	mark := func(who string, lines, other []string) {
		fmt.Fprintf(&b, "  %s:\n", who)
		for _, l := range lines {
			m := " "
			if !slices.Contains(other, l) {
				m = "!"
			}
			fmt.Fprintf(&b, "   %s %s\n", m, l)
		}
	}
	mark("plugin", plugin, knot)
	mark("knot", knot, plugin)
	return b.String()
}

// diffCase is one request with the replies of both servers, as the
// allowances see them: copies, which they change in place.
type diffCase struct {
	q            diffQuery
	zone         string
	rrsets       zoneRRsets
	plugin, knot *dns.Msg
	// The same query over TCP (see full).
	pluginFull, knotFull *dns.Msg
	peers                *diffPeers // to ask again; nil for the odd requests
	// The query that Knot's reply answers, when an allowance asked it
	// another one (see askKnot); nil: q.
	knotQ *diffQuery
}

// full asks both servers the query again over TCP, once, and reports
// whether both replied.
func (c *diffCase) full() bool {
	if c.pluginFull == nil && c.peers != nil {
		c.pluginFull, _ = exchange(c.peers.plugin, c.q.msg(), true)
		q := c.q
		if c.knotQ != nil {
			q = *c.knotQ
		}
		c.knotFull, _ = exchange(c.peers.knot, q.msg(), true)
	}
	return c.pluginFull != nil && c.knotFull != nil
}

// askKnot replaces Knot's reply with its answer to q, a request that an
// allowance holds equivalent to c.q; it reports whether Knot replied.
func (c *diffCase) askKnot(q diffQuery) bool {
	if c.peers == nil {
		return false
	}
	m, _ := exchangeLossy(c.peers.knot, q.msg(), q.flags.tcp, true)
	if m == nil || len(m.Question) != 1 {
		return false
	}
	m.Question[0] = c.knot.Question[0]
	c.knot, c.knotQ = m, &q
	return true
}

// compareReplies applies the allowances to copies of the replies and diffs
// them; it returns the names of the allowances that applied and the diff.
func compareReplies(c diffCase) (forgiven []string, diff string) {
	if c.plugin == nil || c.knot == nil {
		return nil, diffReplies(renderReply(c.plugin), renderReply(c.knot))
	}
	c.plugin, c.knot = c.plugin.Copy(), c.knot.Copy()
	for _, a := range allowances {
		if a.apply(&c) {
			forgiven = append(forgiven, a.kind+"/"+a.name)
		}
	}
	return forgiven, diffReplies(renderReply(c.plugin), renderReply(c.knot))
}
