//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// The comparison of TestForkDifferential: one query to the fork and to the
// plugin, both replies reduced to a line each (rcode, the records of the
// three sections with their TTLs, names relative to the zone and the
// namespace as $ns), and the parts that every negative answer carries
// (the SOA's fields, the header flags, EDNS) compared apart, so that one
// difference there is one row of the table and not one per query.

// forkDiff is one difference: a row of the migration page's table.
type forkDiff struct {
	Case, Fork, Ours string
	Setups           []string // where it was seen
}

// forkDiffs collects the differences. Those of the parts that every reply
// carries are one row each; those of replies that hold nothing of the
// name asked (negative answers, the apex's SOA) are one row per type and
// pair of answers, listing the names; the others are one row per name,
// its types grouped by pair of answers.
type forkDiffs struct {
	aspects, generic, names []*forkDiff
	// genericNames are the names of each generic row, in order.
	genericNames map[*forkDiff][]string
	// pending are the differences of the name being compared, by type;
	// pendingGeneric those that hold nothing of the name.
	pending, pendingGeneric []forkTypeDiff
}

type forkTypeDiff struct{ qtype, fork, ours string }

func (d *forkDiffs) row(rows *[]*forkDiff, setup, what, fork, ours string) *forkDiff {
	for _, r := range *rows {
		if r.Case == what && r.Fork == fork && r.Ours == ours {
			if !slices.Contains(r.Setups, setup) {
				r.Setups = append(r.Setups, setup)
			}
			return r
		}
	}
	r := &forkDiff{Case: what, Fork: fork, Ours: ours, Setups: []string{setup}}
	*rows = append(*rows, r)
	return r
}

// add records a difference of a part of every reply.
func (d *forkDiffs) add(setup, what, fork, ours string) { d.row(&d.aspects, setup, what, fork, ours) }

// addType records a difference of the name being compared; generic when
// neither reply holds anything of the name.
func (d *forkDiffs) addType(qtype, fork, ours string, generic bool) {
	if generic {
		d.pendingGeneric = append(d.pendingGeneric, forkTypeDiff{qtype, fork, ours})
		return
	}
	d.pending = append(d.pending, forkTypeDiff{qtype, fork, ours})
}

// byAnswers groups differences by type: the types with the same pair of
// answers together, in their order.
func byAnswers(diffs []forkTypeDiff) []forkTypeDiff {
	var groups []forkTypeDiff
	for _, p := range diffs {
		i := slices.IndexFunc(groups, func(g forkTypeDiff) bool { return g.fork == p.fork && g.ours == p.ours })
		if i < 0 {
			groups = append(groups, p)
			continue
		}
		groups[i].qtype += " " + p.qtype
	}
	return groups
}

// endName makes the rows of a name: its generic differences join the rows
// of the same types and answers, its others make its own row.
func (d *forkDiffs) endName(setup, name, what string) {
	for _, g := range byAnswers(d.pendingGeneric) {
		r := d.row(&d.generic, setup, g.qtype, g.fork, g.ours)
		if d.genericNames == nil {
			d.genericNames = map[*forkDiff][]string{}
		}
		if !slices.Contains(d.genericNames[r], name) {
			d.genericNames[r] = append(d.genericNames[r], name)
		}
	}
	if len(d.pending) > 0 {
		var fork, ours []string
		for _, g := range byAnswers(d.pending) {
			fork = append(fork, g.qtype+": "+g.fork)
			ours = append(ours, g.qtype+": "+g.ours)
		}
		d.row(&d.names, setup, what, strings.Join(fork, " · "), strings.Join(ours, " · "))
	}
	d.pending, d.pendingGeneric = nil, nil
}

// rows returns every row, in the order of the table.
func (d *forkDiffs) rows() []*forkDiff {
	var out []*forkDiff
	out = append(out, d.aspects...)
	for _, r := range d.generic {
		names := d.genericNames[r]
		list := "`" + strings.Join(names, "`, `") + "`"
		if len(names) > 3 {
			list = fmt.Sprintf("`%s` and %d more names", strings.Join(names[:3], "`, `"), len(names)-3)
		}
		out = append(out, &forkDiff{Case: r.Case + " at " + list, Fork: r.Fork, Ours: r.Ours, Setups: r.Setups})
	}
	return append(out, d.names...)
}

// forkNamer writes names relative to the zone, with the namespace as $ns,
// and a TTL equal to the setup's ttl as "ttl" (so that a difference seen in
// setups with different TTLs is one row).
type forkNamer struct {
	ns, zone string
	ttl      uint32
}

func (n forkNamer) ttlText(ttl uint32) string {
	if ttl == n.ttl {
		return "ttl"
	}
	return strconv.FormatUint(uint64(ttl), 10)
}

func (n forkNamer) name(s string) string {
	lower := strings.ToLower(s)
	z := strings.ToLower(n.zone) + "."
	switch {
	case lower == z:
		s = "@"
	case strings.HasSuffix(lower, "."+z):
		s = s[:len(s)-len(z)-1]
	}
	return strings.ReplaceAll(s, n.ns, "$ns")
}

// rr is a record as the table shows it: its owner when it is not the
// query's name, type, data and TTL.
func (n forkNamer) rr(rr dns.RR, qname string) string {
	h := rr.Header()
	var b strings.Builder
	if h.Name != qname {
		b.WriteString(n.name(h.Name) + " ")
	}
	b.WriteString(dns.TypeToString[h.Rrtype])
	data := strings.TrimPrefix(rr.String(), h.String())
	for _, f := range strings.Fields(data) {
		if strings.HasSuffix(f, ".") && len(f) > 1 {
			f = n.name(f)
		}
		b.WriteString(" " + f)
	}
	if h.Rrtype != dns.TypeSOA {
		b.WriteString(" " + n.ttlText(h.Ttl))
	}
	return b.String()
}

// section is the records of one section, sorted, without OPT; the SOA's
// data is compared apart (compareSOA), so it shows as "SOA".
func (n forkNamer) section(rrs []dns.RR, qname string) string {
	var out []string
	for _, rr := range rrs {
		switch rr.Header().Rrtype {
		case dns.TypeOPT:
			continue
		case dns.TypeSOA:
			out = append(out, n.name(rr.Header().Name)+" SOA")
			if rr.Header().Name == qname {
				out[len(out)-1] = "SOA"
			}
			continue
		}
		out = append(out, n.rr(rr, qname))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// summary is a reply in one line.
func (n forkNamer) summary(m *dns.Msg, qname string) string {
	if m == nil {
		return "no reply"
	}
	parts := []string{dns.RcodeToString[m.Rcode]}
	if s := n.section(m.Answer, qname); s != "" {
		parts = append(parts, s)
	} else {
		parts = append(parts, "no answer")
	}
	if s := n.section(m.Ns, qname); s != "" {
		parts = append(parts, "authority: "+s)
	}
	if s := n.section(m.Extra, qname); s != "" {
		parts = append(parts, "additional: "+s)
	}
	return strings.Join(parts, "; ")
}

// flags are the header bits of a reply.
func flags(m *dns.Msg) string {
	var f []string
	for _, b := range []struct {
		set  bool
		name string
	}{{m.Authoritative, "aa"}, {m.Truncated, "tc"}, {m.RecursionDesired, "rd"}, {m.RecursionAvailable, "ra"},
		{m.AuthenticatedData, "ad"}, {m.CheckingDisabled, "cd"}} {
		if b.set {
			f = append(f, b.name)
		}
	}
	if len(f) == 0 {
		return "none"
	}
	return strings.Join(f, " ")
}

// edns is the OPT record of a reply.
func edns(m *dns.Msg) string {
	opt := m.IsEdns0()
	if opt == nil {
		return "no OPT record"
	}
	return fmt.Sprintf("OPT version %d, payload %d, DO %v, %d options", opt.Version(), opt.UDPSize(), opt.Do(), len(opt.Option))
}

// soaOf returns the SOA record of a reply, in either section.
func soaOf(m *dns.Msg) *dns.SOA {
	for _, rr := range slices.Concat(m.Answer, m.Ns) {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa
		}
	}
	return nil
}

// compareSOA adds the fields in which the two SOA records differ.
func (n forkNamer) compareSOA(d *forkDiffs, setup string, fork, ours *dns.SOA) {
	field := func(what, f, o string) {
		if f != o {
			d.add(setup, what, f, o)
		}
	}
	field("SOA MNAME", n.name(fork.Ns), n.name(ours.Ns))
	field("SOA RNAME", n.name(fork.Mbox), n.name(ours.Mbox))
	if fork.Serial != ours.Serial {
		// The plugin's serial moves with the data: only its kind is shown.
		d.add(setup, "SOA serial", strconv.FormatUint(uint64(fork.Serial), 10), "a serial that moves with the data")
	}
	timers := func(s *dns.SOA) string {
		return fmt.Sprintf("refresh %d, retry %d, expire %d, minimum %s", s.Refresh, s.Retry, s.Expire, n.ttlText(s.Minttl))
	}
	field("SOA timers", timers(fork), timers(ours))
	field("SOA TTL", n.ttlText(fork.Hdr.Ttl), n.ttlText(ours.Hdr.Ttl))
}

// nameFree reports whether a reply holds nothing of the name asked: no
// records but the SOA of the apex.
func nameFree(m *dns.Msg, zone string) bool {
	if m == nil {
		return false
	}
	for _, rr := range slices.Concat(m.Answer, m.Ns, m.Extra) {
		t := rr.Header().Rrtype
		if t != dns.TypeOPT && (t != dns.TypeSOA || !strings.EqualFold(rr.Header().Name, zone+".")) {
			return false
		}
	}
	return true
}

// compareForkReplies adds the differences of one query's two replies: the
// parts that every reply carries, then the rest.
func (n forkNamer) compareForkReplies(d *forkDiffs, setup string, qname string, qtype uint16, fork, ours *dns.Msg) {
	if fork != nil && ours != nil {
		if f, o := flags(fork), flags(ours); f != o && fork.Rcode != dns.RcodeServerFailure {
			d.add(setup, "header flags", f, o)
		}
		if f, o := edns(fork), edns(ours); f != o && fork.Rcode != dns.RcodeServerFailure {
			d.add(setup, "EDNS", f, o)
		}
		if fs, os := soaOf(fork), soaOf(ours); fs != nil && os != nil {
			n.compareSOA(d, setup, fs, os)
		}
	}
	f, o := n.summary(fork, qname), n.summary(ours, qname)
	if f != o {
		d.addType(dns.TypeToString[qtype], f, o, nameFree(fork, n.zone) && nameFree(ours, n.zone))
	}
}
