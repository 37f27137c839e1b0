//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// exchangeUpdate sends wire over UDP to s's UPDATE port and returns the
// reply's bytes and the reply.
func exchangeUpdate(t *testing.T, s *server, wire []byte) ([]byte, *dns.Msg) {
	t.Helper()
	conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", s.updatePort(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(wire); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65535)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	in := new(dns.Msg)
	if err := in.Unpack(buf[:n]); err != nil {
		t.Fatal(err)
	}
	return buf[:n], in
}

// signedMsg packs m signed with k now (the dns package's client: compressed
// when m.Compress).
func signedMsg(t *testing.T, m *dns.Msg, k tsigKey) ([]byte, string) {
	t.Helper()
	m.SetTsig(k.name, dns.CanonicalName(k.alg), 300, time.Now().Unix())
	wire, mac, err := dns.TsigGenerate(m, k.secret, "", false)
	if err != nil {
		t.Fatal(err)
	}
	return wire, mac
}

// TestACMEWire: the MAC is checked over the bytes that arrived. BIND's
// nsupdate with several prerequisites verifies; updates of the apex are
// REFUSED and signed (not BADSIG), also with compressed record data; a byte
// the MAC covers changed in transit is BADSIG; the zone section's errors are FORMERR and
// NOTAUTH, signed; an UPDATE to the DNS port is NOTIMP; a forged MAC with a
// tenant's key name makes no Event in its namespace.
func TestACMEWire(t *testing.T) {
	a := acmeSetup(t)
	s, nsA, coreA := a.s, a.nsA, a.coreA
	name := "_acme-challenge." + a.domainA

	out, err := nsupdate(t, s, a.zone, coreA,
		"prereq yxdomain www."+a.domainA,
		"prereq nxdomain nope."+a.zone,
		"prereq nxrrset "+name+" TXT",
		"prereq yxrrset www."+a.domainA+" A 192.0.2.10",
		"update add "+name+" 60 TXT w1",
		"update add "+name+" 60 TXT w2")
	if err != nil {
		t.Fatalf("nsupdate with four prerequisites: %v\n%s", err, out)
	}
	if got := s.txtValues(t, name); !slices.Equal(got, []string{"w1", "w2"}) {
		t.Errorf("TXT %s = %q, want [w1 w2]", name, got)
	}
	for _, cmd := range []string{
		"update add " + a.zone + " 60 NS ns.example.",
		"update add " + a.zone + " 60 SOA ns.example. hostmaster.example. 1 2 3 4 5",
		"update add www." + a.domainA + " 60 CNAME " + a.zone,
	} {
		if out, err := nsupdate(t, s, a.zone, coreA, cmd); err == nil || !strings.Contains(out, "REFUSED") {
			t.Errorf("nsupdate %q: err=%v, want REFUSED:\n%s", cmd, err, out)
		}
	}
	// The dns package's client, compressing the names in the record data.
	for _, rr := range []string{
		a.zone + " 60 IN NS ns." + a.zone,
		a.zone + " 60 IN SOA ns." + a.zone + " hostmaster." + a.zone + " 1 2 3 4 5",
		a.zone + " 60 IN CNAME www." + a.zone,
	} {
		m := new(dns.Msg)
		m.SetUpdate(a.zone)
		m.Compress = true
		r, err := dns.NewRR(rr)
		if err != nil {
			t.Fatal(err)
		}
		m.Insert([]dns.RR{r})
		wire, mac := signedMsg(t, m, coreA)
		buf, reply := exchangeUpdate(t, s, wire)
		if reply.Rcode != dns.RcodeRefused || reply.IsTsig() == nil || dns.TsigVerify(buf, coreA.secret, mac, false) != nil {
			t.Errorf("%s: %s, want REFUSED signed", rr, dns.RcodeToString[reply.Rcode])
		}
	}

	// One byte the MAC covers changed in transit, the message still
	// well-formed: BADSIG. A letter's case in the owner name leaves the
	// parsed update the same, only the bytes differ; the TTL changes it.
	for _, tc := range []struct {
		what  string
		alter func(b []byte, value int) // value: where the TXT value starts
	}{
		{"a letter's case in the owner name", func(b []byte, _ int) { b[bytes.Index(b, []byte("acme-challenge"))] = 'A' }},
		{"the TTL", func(b []byte, value int) { b[value-1-2-1]++ }}, // TTL, RDLENGTH, TXT length, value
	} {
		wire := signedUpdate(t, a.zone, coreA, name+".", "altered", time.Now())
		tc.alter(wire, bytes.Index(wire, []byte("altered")))
		if err := new(dns.Msg).Unpack(wire); err != nil {
			t.Fatalf("%s: the altered message is malformed: %v", tc.what, err)
		}
		if _, r := exchangeUpdate(t, s, wire); r.Rcode != dns.RcodeNotAuth || r.IsTsig() == nil || r.IsTsig().Error != dns.RcodeBadSig {
			t.Errorf("%s altered: %s (TSIG %v), want NOTAUTH with TSIG error BADSIG", tc.what, dns.RcodeToString[r.Rcode], r.IsTsig())
		}
	}
	if got := s.txtValues(t, name); slices.Contains(got, "altered") {
		t.Errorf("TXT %s = %q: an altered message was applied", name, got)
	}

	// The zone section: none or two records is FORMERR, a zone the plugin
	// does not serve NOTAUTH; both signed.
	for _, tc := range []struct {
		name  string
		zones []string
		rcode int
	}{
		{"no zone", nil, dns.RcodeFormatError},
		{"two zones", []string{a.zone, a.zone}, dns.RcodeFormatError},
		{"zone not served", []string{"example.org."}, dns.RcodeNotAuth},
	} {
		m := &dns.Msg{MsgHdr: dns.MsgHdr{Id: dns.Id(), Opcode: dns.OpcodeUpdate}}
		for _, z := range tc.zones {
			m.Question = append(m.Question, dns.Question{Name: z, Qtype: dns.TypeSOA, Qclass: dns.ClassINET})
		}
		wire, mac := signedMsg(t, m, coreA)
		buf, reply := exchangeUpdate(t, s, wire)
		if reply.Rcode != tc.rcode || reply.IsTsig() == nil {
			t.Errorf("%s: %s (TSIG %v), want %s signed", tc.name, dns.RcodeToString[reply.Rcode], reply.IsTsig() != nil, dns.RcodeToString[tc.rcode])
			continue
		}
		if tc.rcode != dns.RcodeNotAuth { // the dns package verifies no NOTAUTH reply
			if err := dns.TsigVerify(buf, coreA.secret, mac, false); err != nil {
				t.Errorf("%s: reply signature: %v", tc.name, err)
			}
		}
	}

	// Through the DNS port: NOTIMP.
	m := new(dns.Msg)
	m.SetUpdate(a.zone)
	if r, err := dns.Exchange(m, fmt.Sprintf("127.0.0.1:%d", s.port)); err != nil || r.Rcode != dns.RcodeNotImplemented {
		t.Errorf("UPDATE to the DNS port: %v %v, want NOTIMP", r, err)
	}

	// A forged MAC with team-a's key name: BADSIG, and no Event for team-a.
	forged := coreA
	forged.secret = newSecret(t)
	if _, r := exchangeUpdate(t, s, signedUpdate(t, a.zone, forged, name+".", "forged", time.Now())); r.Rcode != dns.RcodeNotAuth {
		t.Errorf("forged: %s, want NOTAUTH", dns.RcodeToString[r.Rcode])
	}
	time.Sleep(2 * time.Second) // the Event recorder's delay
	if out, _ := kubectlErr("", "-n", nsA, "get", "events", "--field-selector", "reason=DNSUpdateRefused", "-o", "jsonpath={.items[*].message}"); strings.Contains(out, "BADSIG") {
		t.Errorf("a forged message made an Event in team-a's namespace: %s", out)
	}
	if got := endpointTargets(t, nsA); !slices.Equal(got, []string{"w1", "w2"}) {
		t.Errorf("team-a's DNSEndpoints hold %q, want [w1 w2]", got)
	}
}
