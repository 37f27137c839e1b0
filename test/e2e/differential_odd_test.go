//go:build e2e

package e2e

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The requests of TestDifferential outside its query matrix: other opcodes,
// classes, an EDNS version, question counts, and transfers over UDP. Where
// the plugin and Knot agree the replies are compared like the matrix's;
// where they legitimately differ, each one's behaviour is pinned, with the
// reason, so that a change on either side shows.

// diffNoReply stands for a request a server drops.
const diffNoReply = "no reply"

// diffOddRequest is one such request. Without plugin and knot, both replies
// must be the same; with them, the rcode (or diffNoReply) each must give.
type diffOddRequest struct {
	name         string
	msg          func() *dns.Msg
	plugin, knot string
	why          string // why they differ
}

func diffQuestion(name string, qtype, qclass uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = false
	m.Question[0].Qclass = qclass
	return m
}

var diffOddRequests = []diffOddRequest{
	{name: "class CH", msg: func() *dns.Msg { return diffQuestion("www."+diffZone, dns.TypeA, dns.ClassCHAOS) }},
	{name: "class CH with EDNS", msg: func() *dns.Msg {
		m := diffQuestion("www."+diffZone, dns.TypeTXT, dns.ClassCHAOS)
		m.SetEdns0(1232, false)
		return m
	}},
	{name: "EDNS version 1", msg: func() *dns.Msg {
		m := diffQuestion("www."+diffZone, dns.TypeA, dns.ClassINET)
		m.SetEdns0(1232, false)
		m.IsEdns0().SetVersion(1)
		return m
	}},
	// RFC 6891 §6.1.1: more than one OPT record is FORMERR. CoreDNS reads
	// only the first, so the plugin checks; both reply without OPT.
	{name: "two OPT records", msg: func() *dns.Msg {
		m := diffQuestion("www."+diffZone, dns.TypeA, dns.ClassINET)
		m.SetEdns0(1232, false)
		m.SetEdns0(1232, true)
		return m
	}},
	{name: "no question", msg: func() *dns.Msg { m := new(dns.Msg); m.Id = dns.Id(); return m }},
	{
		name: "opcode IQUERY", msg: func() *dns.Msg {
			m := diffQuestion("www."+diffZone, dns.TypeA, dns.ClassINET)
			m.Opcode = dns.OpcodeIQuery
			return m
		},
		plugin: "NOTIMP", knot: "NOTIMP",
		why: "IQUERY is obsolete (RFC 3425): both say NOTIMP, but miekg/dns (CoreDNS's server) rejects it from the header alone and echoes no question, Knot echoes it",
	},
	{
		name: "NOTIFY from a stranger", msg: func() *dns.Msg { m := new(dns.Msg); m.SetNotify(diffZone); return m },
		plugin: "NOTIMP", knot: "NOTAUTH",
		why: "the plugin, a primary, implements no NOTIFY (RFC 1035 §4.1.1 NOTIMP); Knot does and refuses a sender its ACL does not list; RFC 1996 names no rcode",
	},
	{
		name: "UPDATE", msg: func() *dns.Msg {
			m := new(dns.Msg)
			m.SetUpdate(diffZone)
			m.Insert([]dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "new." + diffZone, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IPv4(192, 0, 2, 99)}})
			return m
		},
		plugin: "NOTIMP", knot: "NOTAUTH",
		why: "CoreDNS implements no UPDATE (RFC 2136 §3.1: NOTIMP); Knot does and refuses a client its ACL does not list (RFC 2136 §3.3 allows REFUSED or NOTAUTH)",
	},
	{
		name: "class ANY", msg: func() *dns.Msg { return diffQuestion("www."+diffZone, dns.TypeA, dns.ClassANY) },
		plugin: "REFUSED", knot: "NOERROR",
		why: "CoreDNS's server refuses every class but IN before any plugin runs (README: classes other than IN are REFUSED); Knot answers QCLASS * (RFC 1035 §3.2.5) from its IN zone",
	},
	{
		name: "two questions", msg: func() *dns.Msg {
			m := diffQuestion("www."+diffZone, dns.TypeA, dns.ClassINET)
			m.Question = append(m.Question, dns.Question{Name: "shop." + diffZone, Qtype: dns.TypeA, Qclass: dns.ClassINET})
			return m
		},
		plugin: "FORMERR", knot: diffNoReply,
		why: "miekg/dns (CoreDNS's server) answers QDCOUNT≠1 with FORMERR; Knot drops it (RFC 9619 forbids QDCOUNT>1 in a query)",
	},
	{
		name: "opcode STATUS", msg: func() *dns.Msg {
			m := diffQuestion("www."+diffZone, dns.TypeA, dns.ClassINET)
			m.Opcode = dns.OpcodeStatus
			return m
		},
		plugin: "NOTIMP", knot: "NOTIMP",
		why: "STATUS is unspecified (RFC 1035 §4.1.1): miekg/dns rejects it from the header alone, echoing no question",
	},
	{
		name: "an unassigned opcode", msg: func() *dns.Msg {
			m := diffQuestion("www."+diffZone, dns.TypeA, dns.ClassINET)
			m.Opcode = 15
			return m
		},
		plugin: "NOTIMP", knot: "NOTIMP",
		why: "miekg/dns rejects an opcode it does not serve from the header alone, echoing no question",
	},
	// Sizes: a buffer above 64 KiB and one below 512 (read as 512, RFC 6891
	// §6.2.5) for the name with 40 addresses; names of 120 labels (the
	// most that fit in 255 octets below the zone), below a wildcard too.
	{name: "EDNS buffer 65535", msg: func() *dns.Msg {
		m := diffQuestion("many."+diffZone, dns.TypeA, dns.ClassINET)
		m.SetEdns0(65535, false)
		return m
	}},
	{
		name: "EDNS buffer 100", msg: func() *dns.Msg {
			m := diffQuestion("many."+diffZone, dns.TypeA, dns.ClassINET)
			m.SetEdns0(100, false)
			return m
		},
		plugin: "NOERROR", knot: "NOERROR",
		why: "both truncate (TC) as for 512 octets; CoreDNS's scrub keeps the records that fit, Knot none (RFC 2181 §9 allows both; the matrix compares the full answers of truncated replies)",
	},
	{name: "120 labels", msg: func() *dns.Msg {
		return diffQuestion(strings.Repeat("a.", 118)+diffZone, dns.TypeA, dns.ClassINET)
	}},
	{name: "118 labels below a wildcard", msg: func() *dns.Msg {
		return diffQuestion(strings.Repeat("a.", 115)+"wild."+diffZone, dns.TypeAAAA, dns.ClassINET)
	}},
	{
		name: "a name of 256 octets", msg: func() *dns.Msg {
			return diffQuestion(strings.Repeat("a.", 116)+"wild."+diffZone, dns.TypeAAAA, dns.ClassINET)
		},
		plugin: "FORMERR", knot: diffNoReply,
		why: "a name is at most 255 octets (RFC 1035 §3.1): miekg/dns (CoreDNS's server) answers FORMERR, Knot drops the query",
	},
	{name: "an unknown EDNS option", msg: func() *dns.Msg {
		m := diffQuestion("www."+diffZone, dns.TypeA, dns.ClassINET)
		m.SetEdns0(1232, false)
		m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_LOCAL{Code: 65001, Data: []byte{1, 2, 3}})
		return m
	}},
	// EDNS Client Subnet (RFC 7871), as raw option data.
	diffSubnet("ECS", "00011800c00002", "NOERROR"),
	diffSubnet("ECS with a source prefix beyond 32 bits", "000121c0000200", "FORMERR"),
	diffSubnet("ECS with a source prefix beyond 128 bits", "00028100200100", "FORMERR"),
	diffSubnet("ECS of an unknown family", "00030000", "FORMERR"),
	diffSubnet("ECS with a scope in a query", "00011808c00002", "FORMERR"),
	diffSubnet("ECS with address bits beyond the source prefix", "00011700c00003", "FORMERR"),
	{
		name: "AXFR over UDP", msg: func() *dns.Msg { m := new(dns.Msg); m.SetAxfr(diffZone); return m },
		plugin: "REFUSED", knot: "NOTIMP",
		why: "RFC 5936 §4.2 leaves AXFR over UDP undefined: the transfer plugin refuses anything but TCP, Knot says NOTIMP",
	},
	{
		name: "IXFR over UDP", msg: func() *dns.Msg { m := new(dns.Msg); m.SetIxfr(diffZone, 1, "a.", "b."); return m },
		plugin: "REFUSED", knot: "NOERROR",
		why: "the transfer plugin refuses anything but TCP; Knot answers with the single SOA, which tells the client to use TCP (RFC 1995 §2)",
	},
}

// diffSubnet is a query with an ECS option of data (hex), which the plugin
// answers with rcode.
func diffSubnet(name, data, rcode string) diffOddRequest {
	return diffOddRequest{
		name: name, msg: func() *dns.Msg {
			b, err := hex.DecodeString(data)
			if err != nil {
				panic(err)
			}
			m := diffQuestion("www."+diffZone, dns.TypeA, dns.ClassINET)
			m.SetEdns0(1232, false)
			m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_LOCAL{Code: dns.EDNS0SUBNET, Data: b})
			return m
		},
		plugin: rcode, knot: "NOERROR",
		why: "Knot without its geoip module ignores ECS (RFC 6891 §6.1.2); the plugin echoes it and refuses a malformed one as BIND does (RFC 7871 §6; miekg/dns refuses a prefix too long or an unknown family)",
	}
}

// oddExchange sends m once over UDP; a timeout is diffNoReply.
func oddExchange(port int, m *dns.Msg) (*dns.Msg, string, error) {
	c := &dns.Client{Net: "udp", Timeout: 500 * time.Millisecond}
	r, _, err := c.Exchange(m, fmt.Sprintf("127.0.0.1:%d", port))
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return nil, diffNoReply, nil
	case err != nil:
		return nil, "", err
	}
	return r, dns.RcodeToString[r.Rcode], nil
}

// checkOddRequests sends each odd request to both servers.
func checkOddRequests(t *testing.T, pluginPort, knotPort int) {
	t.Helper()
	var diffs []string
	for _, req := range diffOddRequests {
		p, pr, err := oddExchange(pluginPort, req.msg())
		if err != nil {
			t.Fatalf("%s: plugin: %v", req.name, err)
		}
		k, kr, err := oddExchange(knotPort, req.msg())
		if err != nil {
			t.Fatalf("%s: knot: %v", req.name, err)
		}
		if req.plugin != "" {
			if pr != req.plugin || kr != req.knot {
				diffs = append(diffs, fmt.Sprintf("%s: plugin %s, knot %s; want plugin %s, knot %s (%s)", req.name, pr, kr, req.plugin, req.knot, req.why))
			}
			t.Logf("%s: plugin %s, knot %s: %s", req.name, pr, kr, req.why)
			continue
		}
		if p == nil || k == nil {
			diffs = append(diffs, fmt.Sprintf("%s: plugin %s, knot %s", req.name, pr, kr))
			continue
		}
		q := diffQuery{name: req.name}
		if len(p.Question) > 0 {
			q = diffQuery{name: p.Question[0].Name, qtype: p.Question[0].Qtype}
		}
		if _, diff := compareReplies(diffCase{q: q, zone: diffZone, plugin: p, knot: k}); diff != "" {
			diffs = append(diffs, req.name+"\n"+diff)
		}
	}
	if len(diffs) > 0 {
		t.Errorf("requests outside the matrix:\n%s", strings.Join(diffs, "\n"))
	}
}
