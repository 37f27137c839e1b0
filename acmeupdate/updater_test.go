package acmeupdate

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"
)

func txt(t testing.TB, name string, ttl int, value string) dns.RR {
	return mustRR(t, name+" "+itoa(ttl)+" IN TXT \""+value+"\"")
}

func itoa(i int) string { return strconv.Itoa(i) }

func fmtInt(i int) string { return strconv.Itoa(i) }

// existing is the zone the prerequisite cases see.
func existing(t testing.TB) memZone {
	return memZone{
		mustRR(t, "www.example.com. 60 IN A 192.0.2.1"),
		txt(t, "_acme-challenge.c.example.com.", 60, "old"),
	}
}

// updateCase is one update, how it is signed, and what must follow.
type updateCase struct {
	name    string
	build   func(m *dns.Msg)
	key     string // keyA (default), keyB, "none", "unknown", "badsecret", "badalg"
	at      time.Time
	rcode   int
	tsigErr uint16
	reason  string
	quiet   bool     // refused before the message is known to be the key's, new: no OnReject
	stored  []string // the values of team-a at challengeA afterwards
}

// updateCases are the cases of TestUpdate; now is the time of signing.
func updateCases(t *testing.T, now time.Time) []updateCase {
	return []updateCase{
		{name: "add", build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)}) }, stored: []string{acmeValue}},
		{name: "add two values", build: func(m *dns.Msg) {
			m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue), txt(t, challengeA, 60, acmeValue2)})
		}, stored: []string{acmeValue, acmeValue2}},
		{name: "unsigned", quiet: true, key: "none", build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)}) }, rcode: dns.RcodeRefused, reason: ReasonUnsigned},
		{name: "unknown key", quiet: true, key: "unknown", build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)}) }, rcode: dns.RcodeNotAuth, tsigErr: dns.RcodeBadKey, reason: ReasonBadKey},
		{name: "wrong secret", quiet: true, key: "badsecret", build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)}) }, rcode: dns.RcodeNotAuth, tsigErr: dns.RcodeBadSig, reason: ReasonBadSig},
		{name: "wrong algorithm", quiet: true, key: "badalg", build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)}) }, rcode: dns.RcodeNotAuth, tsigErr: dns.RcodeBadKey, reason: ReasonBadKey},
		{name: "time too old", quiet: true, at: now.Add(-301 * time.Second), build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)}) }, rcode: dns.RcodeNotAuth, tsigErr: dns.RcodeBadTime, reason: ReasonBadTime},
		{name: "time in the future", quiet: true, at: now.Add(400 * time.Second), build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)}) }, rcode: dns.RcodeNotAuth, tsigErr: dns.RcodeBadTime, reason: ReasonBadTime},
		{name: "other zone", quiet: true, build: func(m *dns.Msg) { m.Question[0].Name = "example.org." }, rcode: dns.RcodeNotAuth, reason: ReasonNotAuth},
		{name: "two zones", quiet: true, build: func(m *dns.Msg) { m.Question = append(m.Question, m.Question[0]) }, rcode: dns.RcodeFormatError, reason: ReasonFormat},
		{name: "zone type not SOA", quiet: true, build: func(m *dns.Msg) { m.Question[0].Qtype = dns.TypeA }, rcode: dns.RcodeFormatError, reason: ReasonFormat},
		{name: "type A", build: func(m *dns.Msg) { m.Insert([]dns.RR{mustRR(t, challengeA+" 60 IN A 192.0.2.1")}) }, rcode: dns.RcodeRefused, reason: ReasonScope},
		{name: "other owner", build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, "www.example.com.", 60, "x")}) }, rcode: dns.RcodeRefused, reason: ReasonScope},
		{name: "wildcard base", build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, "_acme-challenge.*.example.com.", 60, "x")}) }, rcode: dns.RcodeRefused, reason: ReasonScope},
		{name: "delete name", build: func(m *dns.Msg) { m.RemoveName([]dns.RR{txt(t, challengeA, 0, "x")}) }, rcode: dns.RcodeRefused, reason: ReasonScope},
		{name: "ttl too high", build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 86400, acmeValue)}) }, rcode: dns.RcodeRefused, reason: ReasonScope},
		{name: "txt too long", build: func(m *dns.Msg) {
			m.Insert([]dns.RR{txt(t, challengeA, 60, strings.Repeat("a", 200)+"\" \""+strings.Repeat("b", 100))})
		}, rcode: dns.RcodeRefused, reason: ReasonScope},
		{name: "update class CH", build: func(m *dns.Msg) {
			rr := txt(t, challengeA, 60, acmeValue)
			rr.Header().Class = dns.ClassCHAOS
			m.Ns = append(m.Ns, rr)
		}, rcode: dns.RcodeFormatError, reason: ReasonFormat},
		{name: "update outside zone", build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, "_acme-challenge.example.org.", 60, acmeValue)}) }, rcode: dns.RcodeNotZone, reason: ReasonNotZone},
		{name: "team-b for team-a", key: keyB, build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)}) }, rcode: dns.RcodeRefused, reason: ReasonOwnership},
		{name: "team-b sha512 own name", key: keyB, build: func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, "_acme-challenge.b.example.com.", 60, acmeValue)}) }},
		{name: "prereq name in use, absent", build: func(m *dns.Msg) { m.NameUsed([]dns.RR{txt(t, "nope.example.com.", 0, "x")}) }, rcode: dns.RcodeNameError, reason: ReasonPrereq},
		{name: "prereq name in use", build: func(m *dns.Msg) {
			m.NameUsed([]dns.RR{txt(t, "www.example.com.", 0, "x")})
			m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
		}, stored: []string{acmeValue}},
		{name: "prereq name not in use, present", build: func(m *dns.Msg) { m.NameNotUsed([]dns.RR{txt(t, "www.example.com.", 0, "x")}) }, rcode: dns.RcodeYXDomain, reason: ReasonPrereq},
		{name: "prereq rrset exists, absent", build: func(m *dns.Msg) { m.RRsetUsed([]dns.RR{txt(t, challengeA, 0, "x")}) }, rcode: dns.RcodeNXRrset, reason: ReasonPrereq},
		{name: "prereq rrset does not exist, present", build: func(m *dns.Msg) { m.RRsetNotUsed([]dns.RR{mustRR(t, "www.example.com. 0 IN A 192.0.2.1")}) }, rcode: dns.RcodeYXRrset, reason: ReasonPrereq},
		{name: "prereq value matches", build: func(m *dns.Msg) {
			m.Used([]dns.RR{mustRR(t, "www.example.com. 0 IN A 192.0.2.1")})
			m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
		}, stored: []string{acmeValue}},
		{name: "prereq value differs", build: func(m *dns.Msg) { m.Used([]dns.RR{mustRR(t, "www.example.com. 0 IN A 192.0.2.9")}) }, rcode: dns.RcodeNXRrset, reason: ReasonPrereq},
		{name: "prereq value subset", build: func(m *dns.Msg) {
			m.Used([]dns.RR{mustRR(t, "www.example.com. 0 IN A 192.0.2.1"), mustRR(t, "www.example.com. 0 IN A 192.0.2.2")})
		}, rcode: dns.RcodeNXRrset, reason: ReasonPrereq},
		{name: "prereq outside zone", build: func(m *dns.Msg) { m.NameUsed([]dns.RR{txt(t, "www.example.org.", 0, "x")}) }, rcode: dns.RcodeNotZone, reason: ReasonNotZone},
		{name: "prereq with ttl", build: func(m *dns.Msg) { m.Answer = append(m.Answer, mustRR(t, "www.example.com. 5 IN A 192.0.2.1")) }, rcode: dns.RcodeFormatError, reason: ReasonFormat},
	}
}

func TestUpdate(t *testing.T) {
	now := time.Now()
	cases := updateCases(t, now)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, store, rejected := testUpdater(t, existing(t))
			m := updateMsg(testZone)
			tc.build(m)
			at := tc.at
			if at.IsZero() {
				at = now
			}
			var wire []byte
			var mac, secret string
			switch tc.key {
			case "none":
				var err error
				if wire, err = m.Pack(); err != nil {
					t.Fatal(err)
				}
			case "unknown":
				wire, mac = signed(t, m, "nobody.", dns.HmacSHA256, secretA, at)
			case "badsecret":
				wire, mac = signed(t, m, keyA, dns.HmacSHA256, secretB, at)
			case "badalg":
				wire, mac = signed(t, m, keyA, dns.HmacSHA512, secretA, at)
			case keyB:
				wire, mac = signed(t, m, keyB, dns.HmacSHA512, secretB, at)
				secret = secretB
			default:
				wire, mac = signed(t, m, keyA, dns.HmacSHA256, secretA, at)
				secret = secretA
			}
			counted := rejectedCount(t, "", tc.reason) + rejectedCount(t, testZone, tc.reason)
			reply, buf := serve(t, u, wire)
			if got := rejectedCount(t, "", tc.reason) + rejectedCount(t, testZone, tc.reason); tc.reason != "" && got != counted+1 {
				t.Errorf("update_rejected_total{reason=%s} went from %v to %v", tc.reason, counted, got)
			}
			if reply.Rcode != tc.rcode {
				t.Fatalf("rcode %s, want %s", dns.RcodeToString[reply.Rcode], dns.RcodeToString[tc.rcode])
			}
			checkReplyTSIG(t, reply, buf, tc.key, secret, mac, tc.tsigErr)
			if tc.reason == "" && len(*rejected) > 0 {
				t.Fatalf("rejected: %v", *rejected)
			}
			if tc.quiet && len(*rejected) > 0 {
				t.Fatalf("rejections %v, want none (no Event for what anyone may send)", *rejected)
			}
			if tc.reason != "" && !tc.quiet && (len(*rejected) != 1 || (*rejected)[0].Reason != tc.reason) {
				t.Fatalf("rejections %v, want one with reason %s", *rejected, tc.reason)
			}
			if got := store.values("team-a", challengeA); !slices.Equal(got, tc.stored) {
				t.Fatalf("stored %q, want %q", got, tc.stored)
			}
		})
	}
}

// checkReplyTSIG checks the reply's TSIG: none for an unsigned request,
// signed (and verifying against the request MAC) unless BADKEY or BADSIG.
func checkReplyTSIG(t *testing.T, reply *dns.Msg, buf []byte, key, secret, mac string, tsigErr uint16) {
	t.Helper()
	rt := reply.IsTsig()
	if key == "none" {
		if rt != nil {
			t.Fatal("reply to an unsigned request carries TSIG")
		}
		return
	}
	if rt == nil {
		t.Fatal("reply without TSIG")
	}
	if rt.Error != tsigErr {
		t.Fatalf("TSIG error %s, want %s", dns.RcodeToString[int(rt.Error)], dns.RcodeToString[int(tsigErr)])
	}
	if tsigErr == dns.RcodeBadKey || tsigErr == dns.RcodeBadSig {
		if rt.MAC != "" {
			t.Fatal("BADKEY/BADSIG reply is signed")
		}
		return
	}
	if tsigErr == dns.RcodeBadTime {
		if rt.OtherLen != 6 {
			t.Fatal("BADTIME reply without the server's time")
		}
		return // signed with the request's time: TsigVerify would say BADTIME
	}
	if reply.Rcode == dns.RcodeNotAuth {
		return // the dns package verifies no NOTAUTH reply (ErrAuth)
	}
	if err := dns.TsigVerify(buf, secret, mac, false); err != nil {
		t.Fatalf("reply signature: %v", err)
	}
}

func TestReplay(t *testing.T) {
	u, store, rejected := testUpdater(t, nil)
	m := updateMsg(testZone)
	m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
	wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, time.Now())
	if reply, _ := serve(t, u, wire); reply.Rcode != dns.RcodeSuccess {
		t.Fatalf("first: %s", dns.RcodeToString[reply.Rcode])
	}
	// The owner removes the value; the replayed add must not bring it back.
	del := updateMsg(testZone)
	del.Remove([]dns.RR{txt(t, challengeA, 0, acmeValue)})
	dw, _ := signed(t, del, keyA, dns.HmacSHA256, secretA, time.Now())
	if reply, _ := serve(t, u, dw); reply.Rcode != dns.RcodeSuccess {
		t.Fatalf("delete: %s", dns.RcodeToString[reply.Rcode])
	}
	counted := rejectedCount(t, testZone, ReasonReplay)
	reply, _ := serve(t, u, wire)
	if got := rejectedCount(t, testZone, ReasonReplay); got != counted+1 {
		t.Errorf("update_rejected_total{reason=replay} went from %v to %v", counted, got)
	}
	if reply.Rcode != dns.RcodeRefused || len(*rejected) != 0 {
		t.Fatalf("replay: %s %v", dns.RcodeToString[reply.Rcode], *rejected)
	}
	if got := store.values("team-a", challengeA); len(got) != 0 {
		t.Fatalf("replay changed the store: %q", got)
	}
}

func TestDeletes(t *testing.T) {
	u, store, _ := testUpdater(t, nil)
	send := func(build func(m *dns.Msg)) int {
		m := updateMsg(testZone)
		build(m)
		wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, time.Now())
		reply, _ := serve(t, u, wire)
		return reply.Rcode
	}
	send(func(m *dns.Msg) {
		m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue), txt(t, challengeA, 60, acmeValue2)})
	})
	if rc := send(func(m *dns.Msg) { m.Remove([]dns.RR{txt(t, challengeA, 0, acmeValue)}) }); rc != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rc])
	}
	if got := store.values("team-a", challengeA); !slices.Equal(got, []string{acmeValue2}) {
		t.Fatalf("after deleting one value: %q", got)
	}
	// The overlay answers at once, and the prerequisites see it.
	if rrs, ok := u.Answer(challengeA, nil); !ok || len(rrs) != 1 || rrs[0].(*dns.TXT).Txt[0] != acmeValue2 {
		t.Fatalf("overlay answer %v %v", rrs, ok)
	}
	if rc := send(func(m *dns.Msg) { m.RRsetNotUsed([]dns.RR{txt(t, challengeA, 0, "x")}) }); rc != dns.RcodeYXRrset {
		t.Fatalf("prerequisite after the update: %s", dns.RcodeToString[rc])
	}
	if rc := send(func(m *dns.Msg) { m.RemoveRRset([]dns.RR{txt(t, challengeA, 0, "x")}) }); rc != dns.RcodeSuccess {
		t.Fatal(dns.RcodeToString[rc])
	}
	if got := store.values("team-a", challengeA); len(got) != 0 {
		t.Fatalf("after deleting the RRset: %q", got)
	}
	// Once the zone agrees, the overlay steps aside.
	if _, ok := u.Answer(challengeA, nil); ok {
		t.Fatal("overlay still answers once the zone agrees")
	}
}

func TestStorageFailure(t *testing.T) {
	u, store, rejected := testUpdater(t, nil)
	store.fail = errors.New("the API server is away")
	m := updateMsg(testZone)
	m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
	wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, time.Now())
	if reply, _ := serve(t, u, wire); reply.Rcode != dns.RcodeServerFailure || (*rejected)[0].Reason != ReasonStorage {
		t.Fatalf("%s %v", dns.RcodeToString[reply.Rcode], *rejected)
	}
	if _, ok := u.Answer(challengeA, nil); ok {
		t.Fatal("a failed update is answered")
	}
}

func TestRateLimit(t *testing.T) {
	u, _, rejected := testUpdater(t, nil)
	u.rate = newRateLimit(2)
	var codes []int
	for i := range 3 {
		m := updateMsg(testZone)
		m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue+fmtInt(i))})
		wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, time.Now())
		reply, _ := serve(t, u, wire)
		codes = append(codes, reply.Rcode)
	}
	if !slices.Equal(codes, []int{0, 0, dns.RcodeRefused}) || len(*rejected) != 0 {
		t.Fatalf("rcodes %v, rejections %v", codes, *rejected)
	}
}

// rejectedCount reads update_rejected_total{zone, reason}.
func rejectedCount(t *testing.T, zone, reason string) float64 {
	t.Helper()
	var d dto.Metric
	if err := rejectedTotal.WithLabelValues(zone, reason).Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetCounter().GetValue()
}
