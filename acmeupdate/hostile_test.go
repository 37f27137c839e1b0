package acmeupdate

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// nsupdatePrereqs is an update as BIND 9's nsupdate sent it, signed with
// secretA (key "k.", hmac-sha256) at nsupdatePrereqsTime: four
// prerequisites (yxdomain www, nxdomain nope, nxrrset and yxrrset) and two
// adds, some owner names written whole that it could have compressed.
const nsupdatePrereqs = "b6cd28000001000400020001076578616d706c6503636f6d000006000103777777c00c00ff00ff000000000000046e6f7065c00c00ff00fe0000000000000f5f61636d652d6368616c6c656e6765067465616d2d61076578616d706c6503636f6d00001000fe000000000000c01d00010001000000000004c0000201c03e001000010000003c0003027631c03e001000010000003c0003027632016b0000fa00ff00000000003d0b686d61632d7368613235360000006b089600012c0020b803f3bed24895c8fa904b537c2cf61216a6bc03c47622c9b53933c9ee86f26fb6cd00000000"

// withKeyK adds nsupdate's key "k." (secretA, team-a) to u and sets its clock
// to the time the captures were signed.
func withKeyK(t *testing.T, u *Updater, wire []byte) {
	t.Helper()
	k, err := NewKey("k.", "hmac-sha256", secretA, "team-a", "Corefile")
	if err != nil {
		t.Fatal(err)
	}
	if err := u.cfg.Keys.Set("Secret/team-a/k", k); err != nil {
		t.Fatal(err)
	}
	r := new(dns.Msg)
	if err := r.Unpack(wire); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(int64(r.IsTsig().TimeSigned), 0) // #nosec G115
	u.cfg.Now = func() time.Time { return at }
}

func mustHex(t *testing.T, h string) []byte {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// nsupdateMany has six prerequisites and four adds at four names, signed at
// its own time.
const nsupdateMany = "e2f028000001000600040001076578616d706c6503636f6d000006000103777777c00c00ff00ff000000000000046e6f7065c00c00ff00fe000000000000056e6f706532c00c00ff00fe0000000000000f5f61636d652d6368616c6c656e6765067465616d2d61076578616d706c6503636f6d00001000fe0000000000000f5f61636d652d6368616c6c656e67650161067465616d2d61076578616d706c6503636f6d00001000fe000000000000c01d00010001000000000004c0000201c050001000010000003c0003027631c07e001000010000003c00030276320f5f61636d652d6368616c6c656e67650162067465616d2d61076578616d706c6503636f6d00001000010000003c00030276330f5f61636d652d6368616c6c656e67650163067465616d2d61076578616d706c6503636f6d00001000010000003c0003027634016b0000fa00ff00000000003d0b686d61632d7368613235360000006b089661012c00206cfce7616de347f2ef3d47156d748b453a7f316f210016e6251e7ab511d0078fe2f000000000"

// TestNsupdateSeveralPrerequisites: the MAC is checked over the bytes that
// arrived, however the client compressed them.
func TestNsupdateSeveralPrerequisites(t *testing.T) {
	for i, h := range []string{nsupdatePrereqs, nsupdateMany} {
		u, store, rejected := testUpdater(t, existing(t))
		wire := mustHex(t, h)
		withKeyK(t, u, wire)
		reply, _ := serve(t, u, wire)
		if reply.Rcode != dns.RcodeSuccess {
			t.Fatalf("capture %d: rcode %s, rejections %v", i, dns.RcodeToString[reply.Rcode], *rejected)
		}
		if got := store.values("team-a", challengeA); !slices.Equal(got, []string{"v1"}) && !slices.Equal(got, []string{"v1", "v2"}) {
			t.Fatalf("capture %d: stored %q", i, got)
		}
	}
}

// TestAlteredBytesRefused: one byte that the MAC covers, changed in
// transit in a message that stays well-formed, fails the MAC check:
// NOTAUTH with TSIG error BADSIG (the MAC, not the time, the format or the
// key), nothing stored. Where the parsed message
// stays the same (a letter's case in a name), only a check over the bytes
// that arrived sees it. The unaltered message is applied, so each case
// reaches the MAC with a message the server would otherwise take.
func TestAlteredBytesRefused(t *testing.T) {
	// at finds pattern in the message (before its TSIG RR, which starts
	// with the key name).
	at := func(t *testing.T, b []byte, pattern string) int {
		t.Helper()
		i := bytes.Index(b[:bytes.LastIndex(b, []byte(strings.TrimSuffix(keyA, ".")))], []byte(pattern))
		if i < 0 {
			t.Fatalf("%q not in the message", pattern)
		}
		return i
	}
	// The TSIG RR's fixed tail: time signed (6), fudge (2), then
	// acmeMACTail.
	fudgeAt := func(b []byte) int { return len(b) - len(acmeMACTail) - 2 }
	for _, tc := range []struct {
		name  string
		alter func(t *testing.T, b []byte)
	}{
		{name: "none"},
		{"a letter's case in the zone name", func(t *testing.T, b []byte) { b[at(t, b, "example")] = 'E' }},
		{"a letter's case in the owner name", func(t *testing.T, b []byte) { b[at(t, b, "acme-challenge")] = 'A' }},
		{"the TTL", func(t *testing.T, b []byte) { b[at(t, b, acmeValue)-1-2-1]++ }}, // TTL, RDLENGTH, TXT length, value
		{"a byte of the TXT value", func(t *testing.T, b []byte) { b[at(t, b, acmeValue)] ^= 0x20 }},
		{"a header flag, Z", func(t *testing.T, b []byte) { b[3] |= 0x40 }},
		{"time signed, a second later", func(t *testing.T, b []byte) { b[fudgeAt(b)-1]++ }},
		{"the fudge, 44 s", func(t *testing.T, b []byte) { b[fudgeAt(b)] = 0 }}, // 300 is 0x012c
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, store, rejected := testUpdater(t, existing(t))
			now := time.Unix(time.Now().Unix(), 0)
			u.cfg.Now = func() time.Time { return now }
			m := updateMsg(testZone)
			m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
			wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, now)
			if tc.alter == nil {
				if reply, _ := serve(t, u, wire); reply.Rcode != dns.RcodeSuccess || len(store.values("team-a", challengeA)) != 1 {
					t.Fatalf("the unaltered message: rcode %s, rejections %v", dns.RcodeToString[reply.Rcode], *rejected)
				}
				return
			}
			before := slices.Clone(wire)
			tc.alter(t, wire)
			if n := diffBytes(before, wire); n != 1 {
				t.Fatalf("%d bytes altered, want 1", n)
			}
			if err := new(dns.Msg).Unpack(wire); err != nil {
				t.Fatalf("the altered message is malformed: %v", err)
			}
			reply, buf := serve(t, u, wire)
			if reply.Rcode != dns.RcodeNotAuth {
				t.Fatalf("rcode %s, want NOTAUTH", dns.RcodeToString[reply.Rcode])
			}
			checkReplyTSIG(t, reply, buf, keyA, secretA, "", dns.RcodeBadSig)
			if got := store.values("team-a", challengeA); len(got) != 0 {
				t.Fatalf("stored %q", got)
			}
		})
	}
}

// acmeMACTail is what follows the fudge in a TSIG of hmac-sha256 without
// other data: MAC size (2), MAC (32), original id (2), error (2), other
// length (2).
var acmeMACTail = make([]byte, 2+32+2+2+2)

func diffBytes(a, b []byte) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// TestApexUpdatesRefusedSigned: NS, SOA and CNAME updates at the apex are out
// of scope (REFUSED, signed), also when the client compressed their data.
func TestApexUpdatesRefusedSigned(t *testing.T) {
	for _, rr := range []string{
		"example.com. 60 IN NS ns.example.com.",
		"example.com. 60 IN SOA ns.example.com. hostmaster.example.com. 1 2 3 4 5",
		"www.example.com. 60 IN CNAME example.com.",
	} {
		u, store, rejected := testUpdater(t, existing(t))
		m := updateMsg(testZone)
		m.Compress = true
		m.Insert([]dns.RR{mustRR(t, rr)})
		wire, mac := signed(t, m, keyA, dns.HmacSHA256, secretA, time.Now())
		reply, buf := serve(t, u, wire)
		if reply.Rcode != dns.RcodeRefused || len(*rejected) != 1 || (*rejected)[0].Reason != ReasonScope {
			t.Fatalf("%s: rcode %s, rejections %v", rr, dns.RcodeToString[reply.Rcode], *rejected)
		}
		checkReplyTSIG(t, reply, buf, keyA, secretA, mac, 0)
		if len(store.objs) != 0 {
			t.Fatalf("%s: stored %v", rr, store.objs)
		}
	}
}

// TestOversizeRefusedBeforeMAC: a message beyond the size limit is refused
// on its size, whatever its TSIG, before any MAC is computed.
func TestOversizeRefusedBeforeMAC(t *testing.T) {
	u, _, rejected := testUpdater(t, nil)
	m := updateMsg(testZone)
	for i := range 14 {
		m.Insert([]dns.RR{txt(t, fmt.Sprintf("_acme-challenge.n%d.example.com.", i), 60, strings.Repeat("x", 250)+"\" \""+strings.Repeat("y", 250))})
	}
	wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretB, time.Now()) // wrong MAC
	reply, _ := serve(t, u, wire)
	if reply.Rcode != dns.RcodeRefused {
		t.Fatalf("rcode %s, want REFUSED (size) before the MAC", dns.RcodeToString[reply.Rcode])
	}
	if reply.IsTsig() != nil && reply.IsTsig().Error != 0 {
		t.Fatalf("TSIG error %d: the MAC was checked before the size", reply.IsTsig().Error)
	}
	if len(*rejected) != 0 {
		t.Fatalf("an unauthenticated message reached OnReject: %v", *rejected)
	}
}

// TestFutureTimeRefused: a time signed ahead of the server's clock by more
// than a small skew is BADTIME, even within the fudge.
func TestFutureTimeRefused(t *testing.T) {
	u, store, _ := testUpdater(t, nil)
	m := updateMsg(testZone)
	m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
	wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, time.Now().Add(2*time.Minute))
	reply, _ := serve(t, u, wire)
	if reply.Rcode != dns.RcodeNotAuth || reply.IsTsig() == nil || reply.IsTsig().Error != dns.RcodeBadTime {
		t.Fatalf("rcode %s, want NOTAUTH BADTIME", dns.RcodeToString[reply.Rcode])
	}
	if got := store.values("team-a", challengeA); len(got) != 0 {
		t.Fatalf("stored %q", got)
	}
}

// TestReplayEntryFromServerFudge: a message signed with a small fudge is
// remembered for the server's fudge, so it cannot be applied again later.
func TestReplayEntryFromServerFudge(t *testing.T) {
	u, store, _ := testUpdater(t, nil)
	now := time.Now()
	u.cfg.Now = func() time.Time { return now }
	m := updateMsg(testZone)
	m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
	m.SetTsig(keyA, dns.HmacSHA256, 1, now.Unix())
	wire, _, err := dns.TsigGenerate(m, secretA, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if reply, _ := serve(t, u, wire); reply.Rcode != dns.RcodeSuccess {
		t.Fatalf("first: %s", dns.RcodeToString[reply.Rcode])
	}
	store.objs = map[string][]string{} // the owner removes the value
	// Later, still within the server's fudge but past the message's.
	now = now.Add(2 * time.Second)
	if reply, _ := serve(t, u, wire); reply.Rcode == dns.RcodeSuccess {
		t.Fatal("replayed message applied")
	}
	if got := store.values("team-a", challengeA); len(got) != 0 {
		t.Fatalf("replay stored %q", got)
	}
}

// TestReplayFloodOneTenant: a tenant with a valid key cannot fill the replay
// memory for the others: the rate and its namespace's quota come first.
func TestReplayFloodOneTenant(t *testing.T) {
	u, _, _ := testUpdater(t, nil)
	u.replays = newReplays(64)
	now := time.Now()
	for i := range 200 {
		m := updateMsg(testZone)
		m.Insert([]dns.RR{txt(t, "_acme-challenge.b.example.com.", 60, fmt.Sprintf("v%d", i))})
		wire, _ := signed(t, m, keyB, dns.HmacSHA512, secretB, now)
		serve(t, u, wire)
	}
	m := updateMsg(testZone)
	m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
	wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, now)
	if reply, _ := serve(t, u, wire); reply.Rcode != dns.RcodeSuccess {
		t.Fatalf("team-a after team-b's flood: %s", dns.RcodeToString[reply.Rcode])
	}
}

// TestReplaysCostNoRate: a captured message sent again and again is refused
// as a replay before the rate is charged: 1,000 replays leave the tenant's
// rate as one update left it, and its next new update is accepted.
func TestReplaysCostNoRate(t *testing.T) {
	u, _, _ := testUpdater(t, nil)
	u.rate = newRateLimit(2)
	now := time.Now()
	u.cfg.Now = func() time.Time { return now } // no refill
	m := updateMsg(testZone)
	m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
	wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, now)
	if reply, _ := serve(t, u, wire); reply.Rcode != dns.RcodeSuccess {
		t.Fatalf("first: %s", dns.RcodeToString[reply.Rcode])
	}
	replays, rated := rejectedCount(t, testZone, ReasonReplay), rejectedCount(t, testZone, ReasonRate)
	for i := range 1000 {
		if reply, _ := serve(t, u, wire); reply.Rcode != dns.RcodeRefused {
			t.Fatalf("replay %d: %s", i, dns.RcodeToString[reply.Rcode])
		}
	}
	if got := rejectedCount(t, testZone, ReasonReplay) - replays; got != 1000 {
		t.Errorf("%v replays counted, want 1000", got)
	}
	if got := rejectedCount(t, testZone, ReasonRate) - rated; got != 0 {
		t.Errorf("%v replays refused on the rate", got)
	}
	if b := u.rate.buckets["team-a"]; b == nil || b.tokens != 1 {
		t.Errorf("team-a's bucket after one update and 1,000 replays: %+v, want 1 token", b)
	}
	m = updateMsg(testZone)
	m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue2)})
	fresh, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, now.Add(time.Second))
	if reply, _ := serve(t, u, fresh); reply.Rcode != dns.RcodeSuccess {
		t.Fatalf("a new update after the replays: %s", dns.RcodeToString[reply.Rcode])
	}
}

// TestRatePerNamespace: several keys of one namespace share its rate.
func TestRatePerNamespace(t *testing.T) {
	u, _, rejected := testUpdater(t, nil)
	u.rate = newRateLimit(2)
	k2, err := NewKey("team-a-2.", "hmac-sha256", secretB, "team-a", "Corefile")
	if err != nil {
		t.Fatal(err)
	}
	if err := u.cfg.Keys.Set("Secret/team-a/2", k2); err != nil {
		t.Fatal(err)
	}
	var codes []int
	counted := rejectedCount(t, testZone, ReasonRate)
	for i, k := range []struct{ name, secret string }{{keyA, secretA}, {keyA, secretA}, {"team-a-2.", secretB}} {
		m := updateMsg(testZone)
		m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue+fmtInt(i))})
		wire, _ := signed(t, m, k.name, dns.HmacSHA256, k.secret, time.Now())
		reply, _ := serve(t, u, wire)
		codes = append(codes, reply.Rcode)
	}
	if !slices.Equal(codes, []int{0, 0, dns.RcodeRefused}) || len(*rejected) != 0 || rejectedCount(t, testZone, ReasonRate) != counted+1 {
		t.Fatalf("rcodes %v, rejections %v", codes, *rejected)
	}
}

// TestNoEventForUnauthenticated: a wrong MAC with a victim's key name is not
// the victim's doing: nothing reaches OnReject (no Event in its namespace).
func TestNoEventForUnauthenticated(t *testing.T) {
	u, _, rejected := testUpdater(t, nil)
	m := updateMsg(testZone)
	m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
	wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretB, time.Now())
	if reply, _ := serve(t, u, wire); reply.Rcode != dns.RcodeNotAuth {
		t.Fatalf("rcode %s", dns.RcodeToString[reply.Rcode])
	}
	if len(*rejected) != 0 {
		t.Fatalf("OnReject called for a forged message: %v", *rejected)
	}
}

// blockingStore is a Store whose writes at one name wait for release.
type blockingStore struct {
	*memStore
	name    string
	entered chan struct{}
	release chan struct{}
}

func (s *blockingStore) Edit(ctx context.Context, ns, name, key string, edit EditFunc) (Change, error) {
	if name == s.name {
		close(s.entered)
		<-s.release
	}
	return s.memStore.Edit(ctx, ns, name, key, edit)
}

// TestSlowWriteBlocksNoOtherTenant: the updater holds no lock across an API
// round trip: while team-a's write hangs, team-b's update goes through.
func TestSlowWriteBlocksNoOtherTenant(t *testing.T) {
	u, mem, _ := testUpdater(t, nil)
	bs := &blockingStore{memStore: mem, name: challengeA, entered: make(chan struct{}), release: make(chan struct{})}
	u.cfg.Store = bs
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m := updateMsg(testZone)
		m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
		wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, time.Now())
		serve(t, u, wire)
	}()
	<-bs.entered
	done := make(chan int)
	go func() {
		m := updateMsg(testZone)
		m.Insert([]dns.RR{txt(t, "_acme-challenge.b.example.com.", 60, acmeValue)})
		wire, _ := signed(t, m, keyB, dns.HmacSHA512, secretB, time.Now())
		reply, _ := serve(t, u, wire)
		done <- reply.Rcode
	}()
	select {
	case rc := <-done:
		if rc != dns.RcodeSuccess {
			t.Errorf("team-b: %s", dns.RcodeToString[rc])
		}
	case <-time.After(testTimeout):
		t.Error("team-b's update waited for team-a's write")
	}
	close(bs.release)
	wg.Wait()
}

// TestIndexZoneNoWildcard: prerequisites see names, not wildcard expansion
// (RFC 2136 §3.2): a name only a wildcard covers does not exist.
func TestIndexZoneNoWildcard(t *testing.T) {
	ix := index.New(index.Config{
		Zones: []string{testZone},
		SOA: func(zone string, serial uint32) *dns.SOA {
			return testutil.RR(fmt.Sprintf("%s 60 IN SOA ns.%s hostmaster.%s %d 300 60 604800 60", zone, zone, zone, serial)).(*dns.SOA)
		},
		NS: func(zone string) []dns.RR { return testutil.RRs("example.com. 60 IN NS ns.example.com.") },
	})
	t.Cleanup(ix.Close)
	ix.Update("DNSEndpoint/ns/w", testutil.RRs("*.example.com. 60 IN TXT \"w\"", "*.example.com. 60 IN A 192.0.2.7"))
	ix.Update("DNSEndpoint/ns/www", testutil.RRs("www.example.com. 60 IN A 192.0.2.1"))
	ix.Flush()
	z := IndexZone([]string{testZone}, func(int) *index.Snapshot { return ix.Snapshot() })
	if rrs := z.Records("covered.example.com.", dns.TypeTXT); len(rrs) != 0 {
		t.Errorf("a name only the wildcard covers has TXT %v", rrs)
	}
	if rrs := z.Records("covered.example.com.", dns.TypeANY); len(rrs) != 0 {
		t.Errorf("a name only the wildcard covers is in use: %v", rrs)
	}
	if rrs := z.Records("www.example.com.", dns.TypeA); len(rrs) != 1 {
		t.Errorf("www A: %v", rrs)
	}
	if rrs := z.Records("*.example.com.", dns.TypeTXT); len(rrs) != 1 {
		t.Errorf("the wildcard's own TXT: %v", rrs)
	}
}

// TestNamesFoldASCIIOnly: names compare with DNS case folding (ASCII), never
// Unicode's: a key name or zone with a non-ASCII byte that Unicode would
// lower-case to ASCII is another name.
func TestNamesFoldASCIIOnly(t *testing.T) {
	if got := canonical("TEAM-A.Example.COM"); got != "team-a.example.com." {
		t.Errorf("canonical folds ASCII: %q", got)
	}
	kelvin := "\u212a.example.com." // KELVIN SIGN lower-cases to "k" in Unicode
	if got := canonical(kelvin); got == "k.example.com." {
		t.Errorf("canonical(%q) = %q: Unicode folding", kelvin, got)
	}
	if sameName("\u212a.example.com.", "k.example.com.") || !sameName("K.EXAMPLE.com", "k.example.com.") {
		t.Error("sameName is not ASCII case folding")
	}
}

// TestUnauthenticatedLogBounded: a flood of forged messages gives one log
// line a second, which counts the others.
func TestUnauthenticatedLogBounded(t *testing.T) {
	u, _, _ := testUpdater(t, nil)
	now := time.Now()
	var lines []string
	for i := range 100 {
		at := now.Add(time.Duration(i) * 15 * time.Millisecond) // 1.5 s of them
		if l := u.unauth.line(at, "forged %d", i); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[1], "and 66 more") {
		t.Fatalf("lines %q, want two, the second counting 66 left out", lines)
	}
}
