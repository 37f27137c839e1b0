package delegation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/tsig"
)

// Parent is a parent server that takes signed updates of delegations.
type Parent struct {
	Addr    string        // host:port
	Key     tsig.Key      // shared with the parent
	Timeout time.Duration // per exchange; 5 s when 0
}

// errRace is returned when the registry changed between the read and the
// update (another replica wrote it): sync may be called again at once.
var errRace = errors.New("delegation: the registry changed under the update")

// syncResult says what a sync changed.
type syncResult struct {
	Added, Removed int
}

// sync makes the parent hold the delegation w: it reads the registry, adds
// the wanted records that are missing from it, removes the owned records
// that are not wanted, and rewrites the registry, in one signed UPDATE
// guarded by the registry's old content. Nothing is sent when the registry
// already lists exactly w.
func (p *Parent) sync(ctx context.Context, w zoneCut) (syncResult, error) {
	zone := dns.CanonicalName(w.zone)
	parentZone, err := p.parentZone(ctx, zone)
	if err != nil {
		return syncResult{}, err
	}
	reg := registryName(zone, parentZone)
	regTXT, err := p.registry(ctx, reg)
	if err != nil {
		return syncResult{}, err
	}
	owned := decodeRegistry(zone, regTXT)
	want := w.records()
	add, remove := plan(want, owned)
	if len(add) == 0 && len(remove) == 0 && len(regTXT) == len(want) {
		return syncResult{}, nil
	}

	m := new(dns.Msg)
	m.SetUpdate(parentZone)
	// The registry is as read: else another writer came first.
	if len(regTXT) == 0 {
		m.NameNotUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: reg, Rrtype: dns.TypeANY, Class: dns.ClassANY}}})
	} else {
		m.Used([]dns.RR{&dns.TXT{Hdr: hdr(reg, dns.TypeTXT, 0), Txt: regTXT}})
	}
	if len(remove) > 0 {
		m.Remove(remove)
	}
	if len(add) > 0 {
		m.Insert(add)
	}
	m.RemoveRRset([]dns.RR{&dns.TXT{Hdr: hdr(reg, dns.TypeTXT, 0)}})
	if len(want) > 0 {
		m.Insert([]dns.RR{&dns.TXT{Hdr: hdr(reg, dns.TypeTXT, w.ttl), Txt: encodeRegistry(want)}})
	}
	r, err := p.exchange(ctx, m)
	if err != nil {
		return syncResult{}, err
	}
	switch r.Rcode {
	case dns.RcodeSuccess:
		return syncResult{Added: len(add), Removed: len(remove)}, nil
	case dns.RcodeNXRrset, dns.RcodeYXDomain:
		return syncResult{}, errRace
	default:
		return syncResult{}, fmt.Errorf("delegation: parent %s answered the update of %s in %s with %s", p.Addr, zone, parentZone, dns.RcodeToString[r.Rcode])
	}
}

// parentZone asks the parent for the SOA of the zone's parent name and
// returns the zone it answers from (the owner of the SOA it gives).
func (p *Parent) parentZone(ctx context.Context, zone string) (string, error) {
	i, end := dns.NextLabel(zone, 0)
	if end {
		return "", fmt.Errorf("delegation: %s has no parent", zone)
	}
	m := new(dns.Msg)
	m.SetQuestion(zone[i:], dns.TypeSOA)
	r, err := p.exchange(ctx, m)
	if err != nil {
		return "", err
	}
	for _, rr := range append(r.Answer, r.Ns...) {
		if soa, ok := rr.(*dns.SOA); ok && dns.IsSubDomain(soa.Hdr.Name, zone) && soa.Hdr.Name != zone {
			return dns.CanonicalName(soa.Hdr.Name), nil
		}
	}
	return "", fmt.Errorf("delegation: parent %s is not authoritative above %s (%s, no SOA)", p.Addr, zone, dns.RcodeToString[r.Rcode])
}

// registry returns the strings of the registry TXT at reg in the parent.
func (p *Parent) registry(ctx context.Context, reg string) ([]string, error) {
	m := new(dns.Msg)
	m.SetQuestion(reg, dns.TypeTXT)
	r, err := p.exchange(ctx, m)
	if err != nil {
		return nil, err
	}
	if r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError {
		return nil, fmt.Errorf("delegation: reading %s at %s: %s", reg, p.Addr, dns.RcodeToString[r.Rcode])
	}
	var txt []string
	for _, rr := range r.Answer {
		if t, ok := rr.(*dns.TXT); ok {
			txt = append(txt, t.Txt...)
		}
	}
	return txt, nil
}

// exchange sends m over TCP, signed with the key when it is an update, and
// checks the signature of the answer.
func (p *Parent) exchange(ctx context.Context, m *dns.Msg) (*dns.Msg, error) {
	timeout := p.Timeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	c := &dns.Client{Net: "tcp", Timeout: timeout}
	if m.Opcode == dns.OpcodeUpdate && p.Key.Name != "" {
		name := dns.CanonicalName(p.Key.Name)
		c.TsigSecret = map[string]string{name: p.Key.Secret}
		m.SetTsig(name, p.Key.Algorithm, 300, time.Now().Unix())
	}
	r, _, err := c.ExchangeContext(ctx, m, p.Addr)
	if errors.Is(err, dns.ErrAuth) || errors.Is(err, dns.ErrSig) || errors.Is(err, dns.ErrTime) || errors.Is(err, dns.ErrSecret) {
		return nil, fmt.Errorf("delegation: parent %s refused the key %s (%v: unknown key, wrong secret or clock skew)", p.Addr, p.Key.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("delegation: parent %s: %w", p.Addr, err)
	}
	if r.Rcode == dns.RcodeNotAuth && m.Opcode == dns.OpcodeUpdate {
		return nil, fmt.Errorf("delegation: parent %s refused the key %s (NOTAUTH: unknown key, bad signature or clock skew)", p.Addr, p.Key.Name)
	}
	return r, nil
}
