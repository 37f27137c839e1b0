package acmeupdate

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"sync"
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
	ReasonSize      = "size"
	ReasonPrereq    = "prerequisite"
	ReasonNotZone   = "notzone"
	ReasonScope     = "scope"
	ReasonOwnership = "ownership"
	ReasonStorage   = "storage"
)

// verdict is what the TSIG check found.
type verdict struct {
	key    Key
	tsig   *dns.TSIG // the request's TSIG RR; nil when there is none
	err    uint16    // TSIG error: 0, BADKEY, BADSIG or BADTIME
	reason string
}

// verifyTSIG checks the TSIG of r (RFC 8945 §5.2) against the keyring, with
// the server's clock now and its largest fudge. The dns package gives the
// handler a parsed message: the MAC is checked over the encodings it may have
// had on the wire (see wireEncodings).
func verifyTSIG(r *dns.Msg, kr *Keyring, now time.Time, maxFudge uint16) verdict {
	t := r.IsTsig()
	if t == nil {
		return verdict{reason: ReasonUnsigned}
	}
	v := verdict{tsig: t}
	key, ok := kr.Get(dns.CanonicalName(t.Hdr.Name))
	if !ok || dns.CanonicalName(t.Algorithm) != key.Algorithm {
		v.err, v.reason = dns.RcodeBadKey, ReasonBadKey
		return v
	}
	v.key = key
	if !macMatches(r, key.Secret) {
		v.err, v.reason = dns.RcodeBadSig, ReasonBadSig
		return v
	}
	fudge := min(t.Fudge, maxFudge)
	signed := time.Unix(int64(t.TimeSigned), 0) // #nosec G115 -- 48 bits
	if d := now.Sub(signed); d > time.Duration(fudge)*time.Second || -d > time.Duration(fudge)*time.Second {
		v.err, v.reason = dns.RcodeBadTime, ReasonBadTime
	}
	return v
}

// macMatches reports whether the MAC of r's TSIG is right for secret, over
// one of the encodings r may have had (see wireEncodings).
func macMatches(r *dns.Msg, secret string) bool {
	return wireEncodings(r, func(buf []byte) bool {
		// The dns package checks the time too, with the wall clock: the MAC
		// is right when that is the only complaint (the caller checks the
		// time with its own clock).
		err := dns.TsigVerify(buf, secret, "", false)
		return err == nil || errors.Is(err, dns.ErrTime)
	})
}

// wireCopy returns a shallow copy of r whose records without RDATA (the
// deletes and prerequisites of RFC 2136) pack again without RDATA: the dns
// package packs the zero value of most types with some bytes.
func wireCopy(r *dns.Msg) *dns.Msg {
	m := *r
	fix := func(rrs []dns.RR) []dns.RR {
		out := make([]dns.RR, len(rrs))
		for i, rr := range rrs {
			if h := rr.Header(); h.Rdlength == 0 && h.Rrtype != dns.TypeOPT && h.Rrtype != dns.TypeTSIG {
				rr = &dns.ANY{Hdr: *h}
			}
			out[i] = rr
		}
		return out
	}
	m.Answer, m.Ns, m.Extra = fix(r.Answer), fix(r.Ns), fix(r.Extra)
	return &m
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
// ends, so that a message is applied at most once per process.
type replays struct {
	mu   sync.Mutex
	seen map[string]int64 // key name + MAC → Unix time the entry may go
	max  int
}

func newReplays(max int) *replays { return &replays{seen: map[string]int64{}, max: max} }

// first records the MAC of a request and reports whether it is new. A full
// table refuses (as a replay) rather than forget a MAC still in its window.
func (rp *replays) first(v verdict, now time.Time, fudge uint16) bool {
	id := v.key.Name + "|" + v.tsig.MAC
	until := int64(v.tsig.TimeSigned) + int64(min(v.tsig.Fudge, fudge)) + 1 // #nosec G115
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if exp, ok := rp.seen[id]; ok && exp >= now.Unix() {
		return false
	}
	if len(rp.seen) >= rp.max {
		for k, exp := range rp.seen {
			if exp < now.Unix() {
				delete(rp.seen, k)
			}
		}
		if len(rp.seen) >= rp.max {
			return false
		}
	}
	rp.seen[id] = until
	return true
}
