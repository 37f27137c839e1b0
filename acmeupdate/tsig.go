package acmeupdate

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// Reasons of refusals, as logs and the rejected metric name them.
const (
	ReasonUnsigned  = "unsigned"
	ReasonBadKey    = "badkey"
	ReasonBadSig    = "badsig"
	ReasonBadTime   = "badtime"
	ReasonReplay    = "replay"
	ReasonFormat    = "formerr"
	ReasonNotAuth   = "notauth"
	ReasonRate      = "rate"
	ReasonQuota     = "quota"
	ReasonSize      = "size"
	ReasonPrereq    = "prerequisite"
	ReasonNotZone   = "notzone"
	ReasonScope     = "scope"
	ReasonOwnership = "ownership"
	ReasonStorage   = "storage"
)

// maxAhead is how far ahead of the server's clock a time signed may be
// (within the fudge): clocks drift a little, messages are not sent from the
// future, and an entry of the replay memory lives at most fudge + maxAhead.
const maxAhead = 10 * time.Second

// verdict is what the TSIG check found.
type verdict struct {
	key    Key
	tsig   *dns.TSIG // the request's TSIG RR; nil when there is none
	err    uint16    // TSIG error: 0, BADKEY, BADSIG or BADTIME
	reason string
}

// macsComputed counts the MACs computed over requests, for the tests of the
// work bound.
var macsComputed atomic.Int64

// verifyTSIG checks the TSIG of b, whose TSIG RR starts at l.tsig (RFC 8945
// §5.2), against the keyring, with the server's clock now and its fudge:
// one MAC over the bytes that arrived.
func verifyTSIG(b []byte, l layout, kr *Keyring, now time.Time, fudge uint16) (verdict, bool) {
	if l.tsig < 0 {
		return verdict{reason: ReasonUnsigned}, true
	}
	rr, _, err := dns.UnpackRR(b, l.tsig)
	t, ok := rr.(*dns.TSIG)
	if err != nil || !ok {
		return verdict{}, false
	}
	v := verdict{tsig: t}
	key, ok := kr.Get(canonical(t.Hdr.Name))
	newHash := hashOf(key.Algorithm)
	if !ok || canonical(t.Algorithm) != key.Algorithm || newHash == nil {
		v.err, v.reason = dns.RcodeBadKey, ReasonBadKey
		return v, true
	}
	v.key = key
	if !macMatches(b, l.tsig, t, key.Secret, newHash) {
		v.err, v.reason = dns.RcodeBadSig, ReasonBadSig
		return v, true
	}
	signed, at := int64(t.TimeSigned), now.Unix() // #nosec G115 -- 48 bits
	window := int64(min(t.Fudge, fudge))
	if at-signed > window || signed-at > min(window, int64(maxAhead/time.Second)) {
		v.err, v.reason = dns.RcodeBadTime, ReasonBadTime
	}
	return v, true
}

func hashOf(algorithm string) func() hash.Hash {
	switch algorithm {
	case dns.HmacSHA256:
		return sha256.New
	case dns.HmacSHA384:
		return sha512.New384
	case dns.HmacSHA512:
		return sha512.New
	}
	return nil
}

// macMatches computes the MAC of RFC 8945 §4.3 over b: the message without
// its TSIG RR (at tsigAt), its ID the original one and its ARCOUNT one less,
// then the TSIG variables as t has them, and compares it with t's MAC. A
// MAC shorter than the hash (truncation, §5.2.2.1) does not match.
func macMatches(b []byte, tsigAt int, t *dns.TSIG, secret string, newHash func() hash.Hash) bool {
	raw, err := base64.StdEncoding.DecodeString(secret)
	if err != nil {
		return false
	}
	want, err := hex.DecodeString(t.MAC)
	if err != nil {
		return false
	}
	macsComputed.Add(1)
	mac := hmac.New(newHash, raw)
	if len(want) != mac.Size() {
		return false
	}
	var hdr [headerLen]byte
	copy(hdr[:], b)
	binary.BigEndian.PutUint16(hdr[0:], t.OrigId)
	binary.BigEndian.PutUint16(hdr[10:], binary.BigEndian.Uint16(b[10:])-1)
	mac.Write(hdr[:])
	mac.Write(b[headerLen:tsigAt])
	vars, ok := tsigVariables(t)
	if !ok {
		return false
	}
	mac.Write(vars)
	return hmac.Equal(mac.Sum(nil), want)
}

// tsigVariables packs the TSIG variables of RFC 8945 §4.3.3, names in
// canonical form, the other fields as the request has them.
func tsigVariables(t *dns.TSIG) ([]byte, bool) {
	other, err := hex.DecodeString(t.OtherData)
	if err != nil || len(other) != int(t.OtherLen) {
		return nil, false
	}
	buf := make([]byte, 0, 2*256+20+len(other))
	for i, name := range []string{canonical(t.Hdr.Name), canonical(t.Algorithm)} {
		n := make([]byte, 256)
		off, err := dns.PackDomainName(name, n, 0, nil, false)
		if err != nil {
			return nil, false
		}
		buf = append(buf, n[:off]...)
		if i == 0 {
			buf = binary.BigEndian.AppendUint16(buf, dns.ClassANY)
			buf = binary.BigEndian.AppendUint32(buf, t.Hdr.Ttl)
		}
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(t.TimeSigned>>32)) // #nosec G115 -- 48 bits
	buf = binary.BigEndian.AppendUint32(buf, uint32(t.TimeSigned))     // #nosec G115
	buf = binary.BigEndian.AppendUint16(buf, t.Fudge)
	buf = binary.BigEndian.AppendUint16(buf, t.Error)
	buf = binary.BigEndian.AppendUint16(buf, t.OtherLen)
	return append(buf, other...), true
}

// signReply packs reply with a TSIG RR answering the request's (RFC 8945
// §5.3): signed with the key, except after BADKEY and BADSIG; after BADTIME
// the server's time is in the other data.
func signReply(reply *dns.Msg, v verdict, now time.Time) ([]byte, error) {
	t := &dns.TSIG{
		Hdr:       dns.RR_Header{Name: v.tsig.Hdr.Name, Rrtype: dns.TypeTSIG, Class: dns.ClassANY},
		Algorithm: v.tsig.Algorithm,
		Fudge:     300,
		OrigId:    reply.Id,
		Error:     v.err,
	}
	t.TimeSigned = uint64(now.Unix()) // #nosec G115 -- after 1970
	if v.err == dns.RcodeBadTime {
		t.TimeSigned = v.tsig.TimeSigned
		b := make([]byte, 8)
		binary.BigEndian.PutUint64(b, uint64(now.Unix())) // #nosec G115
		t.OtherData, t.OtherLen = hex.EncodeToString(b[2:]), 6
	}
	reply.Extra = append(reply.Extra, t)
	secret, requestMAC := v.key.Secret, v.tsig.MAC
	if v.err == dns.RcodeBadKey || v.err == dns.RcodeBadSig {
		secret, requestMAC = "", ""
	}
	buf, _, err := dns.TsigGenerate(reply, secret, requestMAC, false)
	return buf, err
}

// replays remembers the MACs of verified requests until their time window
// ends, so that a message is applied at most once per process. Each
// namespace has a quota of entries, and so has the whole table: a tenant
// fills its own share only.
type replays struct {
	mu        sync.Mutex
	seen      map[string]replay // key name + MAC
	perNS     map[string]int
	max       int
	maxPerNS  int
	lastSweep int64
}

type replay struct {
	until     int64 // Unix time after which the entry may go
	namespace string
}

func newReplays(size int) *replays {
	return &replays{seen: map[string]replay{}, perNS: map[string]int{}, max: size, maxPerNS: max(size/64, 16)}
}

// record remembers the MAC of a verified request until its window (from the
// server's fudge) ends, and returns "" when it is new, ReasonReplay when it
// was seen, ReasonQuota when the namespace's or the table's share is full
// (rather than forget a MAC still in its window).
func (rp *replays) record(v verdict, now time.Time, fudge uint16) string {
	id := v.key.Name + "|" + v.tsig.MAC
	until := int64(v.tsig.TimeSigned) + int64(fudge) + 1 // #nosec G115 -- 48 bits
	at := now.Unix()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if e, ok := rp.seen[id]; ok && e.until >= at {
		return ReasonReplay
	}
	ns := v.key.Namespace
	if at > rp.lastSweep || len(rp.seen) >= rp.max || rp.perNS[ns] >= rp.maxPerNS {
		rp.sweep(at)
	}
	if len(rp.seen) >= rp.max || rp.perNS[ns] >= rp.maxPerNS {
		return ReasonQuota
	}
	rp.seen[id] = replay{until: until, namespace: ns}
	rp.perNS[ns]++
	return ""
}

// sweep forgets the entries whose window has ended; it runs at most once a
// second of the clock, or when a quota is reached.
func (rp *replays) sweep(at int64) {
	rp.lastSweep = at
	for id, e := range rp.seen {
		if e.until < at {
			delete(rp.seen, id)
			if rp.perNS[e.namespace]--; rp.perNS[e.namespace] <= 0 {
				delete(rp.perNS, e.namespace)
			}
		}
	}
}
