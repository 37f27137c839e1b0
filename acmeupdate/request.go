package acmeupdate

import (
	"context"
	"time"

	"github.com/miekg/dns"
)

// Handle answers the UPDATE message b, as it came from the network, and
// returns the reply to send (nil: none), and whether b proved its key: a MAC
// and time that verified, on a message not seen before (see Handler). The
// work spent on a message that is not authenticated is bounded before any
// of it is done: its size and section counts are checked on the header, its
// records are found in one pass over its bytes, and one MAC is computed
// over those bytes.
func (u *Updater) Handle(ctx context.Context, b []byte) (reply []byte, proven bool) {
	reply = u.handle(ctx, b, &proven)
	return reply, proven
}

func (u *Updater) handle(ctx context.Context, b []byte, proven *bool) []byte {
	now := u.cfg.Now()
	h, ok := readHeader(b)
	if !ok || h.response {
		return nil // not a request: answering could only amplify
	}
	if h.opcode != dns.OpcodeUpdate {
		return plainReply(h, dns.RcodeNotImplemented)
	}
	lim := u.cfg.Limits
	unauth := func(rcode int, reason, detail string) []byte {
		u.refuseUnauthenticated(Rejection{Reason: reason, Rcode: rcode, Detail: detail}, now)
		return plainReply(h, rcode)
	}
	switch {
	case len(b) > lim.MaxMessage:
		return unauth(dns.RcodeRefused, ReasonSize, "message too large")
	case h.qd > 2:
		return unauth(dns.RcodeFormatError, ReasonFormat, "zone section of more than two records")
	case h.an > lim.MaxPrereqs || h.ns > lim.MaxRecords || h.ar > 2:
		return unauth(dns.RcodeRefused, ReasonSize, "too many records")
	}
	l, err := scan(b, h)
	if err != nil || l.misplaced {
		return unauth(dns.RcodeFormatError, ReasonFormat, "malformed message or TSIG not last")
	}
	v, ok := verifyTSIG(b, l, u.cfg.Keys, now, u.cfg.Fudge)
	switch {
	case !ok:
		return unauth(dns.RcodeFormatError, ReasonFormat, "malformed TSIG")
	case v.tsig == nil:
		return unauth(dns.RcodeRefused, ReasonUnsigned, "updates must be signed with TSIG")
	case v.err != 0:
		rej := Rejection{Key: canonical(v.tsig.Hdr.Name), Reason: v.reason, Rcode: dns.RcodeNotAuth, Detail: "TSIG " + dns.RcodeToString[int(v.err)]}
		u.refuseUnauthenticated(rej, now)
		return u.signed(zoneReply(b, h), v, dns.RcodeNotAuth, now)
	}
	// Authenticated: the message is read, every reply is signed.
	r := new(dns.Msg)
	if err := r.Unpack(b); err != nil {
		u.refuseUnauthenticated(Rejection{Key: v.key.Name, Reason: ReasonFormat, Rcode: dns.RcodeFormatError, Detail: err.Error()}, now)
		return u.signed(zoneReply(b, h), v, dns.RcodeFormatError, now)
	}
	reply := new(dns.Msg)
	reply.SetReply(r)
	reply.Answer, reply.Ns, reply.Extra = nil, nil, nil
	rej := Rejection{Key: v.key.Name, Namespace: v.key.Namespace, Source: v.key.Source}
	// Until the message is known to be new, a refusal may be a replay of the
	// tenant's message by anyone: it is logged at a bounded rate, and no
	// Event is made of it.
	early := func(rcode int, reason, detail string) []byte {
		rej.Rcode, rej.Reason, rej.Detail = rcode, reason, detail
		u.refuseUnauthenticated(rej, now)
		return u.signed(reply, v, rcode, now)
	}
	zone, f := zoneOf(r, u.cfg.Zones)
	if f != nil {
		return early(f.rcode, f.reason, f.detail)
	}
	rej.Zone = zone
	// Replays before the rate: anyone who saw a message may send it again,
	// and a replay must cost its tenant nothing. A new MAC is remembered
	// even when the rate refuses it, so that it cannot be replayed later.
	switch u.replays.record(v, now, u.cfg.Fudge) {
	case ReasonReplay:
		return early(dns.RcodeRefused, ReasonReplay, "a message with this MAC was seen before")
	case ReasonQuota:
		return early(dns.RcodeRefused, ReasonQuota, "too many recent updates of namespace "+v.key.Namespace)
	}
	*proven = true
	if ok, why := u.rate.allow(v.key.Namespace, now); !ok {
		return early(dns.RcodeRefused, ReasonRate, why)
	}
	rcode := dns.RcodeSuccess
	if f := u.process(ctx, r, zone, v.key, &rej, now); f != nil {
		rej.Reason, rej.Rcode, rej.Detail = f.reason, f.rcode, f.detail
		u.reject(rej)
		rcode = f.rcode
	}
	return u.signed(reply, v, rcode, now)
}

// zoneReply is the reply to a message not read past its header: its zone
// section copied when it has one, as the clients expect.
func zoneReply(b []byte, h header) *dns.Msg {
	reply := &dns.Msg{MsgHdr: dns.MsgHdr{Id: h.id, Response: true, Opcode: h.opcode}}
	if h.qd != 1 {
		return reply
	}
	name, off, err := dns.UnpackDomainName(b, headerLen)
	if err != nil || off+4 > len(b) {
		return reply
	}
	reply.Question = []dns.Question{{Name: name, Qtype: uint16(b[off])<<8 | uint16(b[off+1]), Qclass: uint16(b[off+2])<<8 | uint16(b[off+3])}}
	return reply
}

// signed returns reply with rcode and a TSIG answering the request's (see
// signReply); nil when it cannot be packed.
func (u *Updater) signed(reply *dns.Msg, v verdict, rcode int, now time.Time) []byte {
	reply.Rcode = rcode
	buf, err := signReply(reply, v, now)
	if err != nil {
		log.Errorf("updates: the reply cannot be packed: %v", err)
		return nil
	}
	return buf
}

// reject counts, logs and reports (Config.OnReject: an Event for the tenant)
// the refusal of an authenticated, new message.
func (u *Updater) reject(r Rejection) {
	log.Warning(r.String())
	rejectedTotal.WithLabelValues(r.Zone, r.Reason).Inc()
	if u.cfg.OnReject != nil {
		u.cfg.OnReject(r)
	}
}

// refuseUnauthenticated counts the refusal of a message that is not known
// to be its key's, new: anyone may send it. It is logged at most once a
// second, and never reported to OnReject (no Event in a namespace for what
// an outsider sent with its key's name).
func (u *Updater) refuseUnauthenticated(r Rejection, now time.Time) {
	rejectedTotal.WithLabelValues(r.Zone, r.Reason).Inc()
	if line := u.unauth.line(now, "%s", r.String()); line != "" {
		log.Warning(line)
	}
}
