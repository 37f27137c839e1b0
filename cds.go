package gateway

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"
)

// cdsOption is the cds option: the zones' apexes carry CDS and CDNSKEY
// records (RFC 7344, RFC 8078) for the keys the dnssec plugin signs with, so
// that the parent (or a tool acting for it, such as dnssec-cds) can keep its
// DS records in step with the keys, rollovers included.
type cdsOption struct {
	// remove publishes the delete records instead (RFC 8078 §4: CDS 0 0 0 00,
	// CDNSKEY 0 3 0 AA==): the parent is asked to remove the DS, before the
	// zone goes unsigned.
	remove bool
}

// cdsSets are the CDS and CDNSKEY RRsets of each zone, by zone index.
type cdsSets struct {
	cds, cdnskey [][]dns.RR
}

// parseCDS reads `cds [delete]`.
func parseCDS(c *caddy.Controller, g *Gateway, args []string) error {
	switch {
	case len(args) == 0:
		g.cdsOpt = &cdsOption{}
	case len(args) == 1 && args[0] == "delete":
		g.cdsOpt = &cdsOption{remove: true}
	default:
		return argCountErr(c, "cds [delete]", args)
	}
	return nil
}

// startCDS reads the keys of signer, the dnssec plugin of the server block
// (nil when there is none), and builds the CDS and CDNSKEY records of each
// zone. It fails without a dnssec plugin, or when it signs one of the zones
// with no key.
func (g *Gateway) startCDS(signer plugin.Handler) error {
	if g.cdsOpt == nil {
		return nil
	}
	if signer == nil {
		return fmt.Errorf("cds: the server block has no dnssec plugin: the CDS and CDNSKEY records follow its keys")
	}
	sets := &cdsSets{cds: make([][]dns.RR, len(g.Zones)), cdnskey: make([][]dns.RR, len(g.Zones))}
	for zi, zone := range g.Zones {
		keys, err := signingKeys(signer, zone)
		if err != nil {
			return fmt.Errorf("cds: zone %s: %v", zone, err)
		}
		sets.cds[zi], sets.cdnskey[zi] = g.cdsRecords(zone, keys)
	}
	g.cds.Store(sets)
	return nil
}

// signingKeys asks the dnssec plugin for the DNSKEY RRset of zone and
// returns its secure entry points (the keys a DS points at); all zone keys
// when none has the SEP flag, as the plugin then signs with each.
func signingKeys(signer plugin.Handler, zone string) (keys []*dns.DNSKEY, err error) {
	defer func() {
		if p := recover(); p != nil {
			keys, err = nil, fmt.Errorf("the dnssec plugin failed to answer DNSKEY: %v", p)
		}
	}()
	r := new(dns.Msg)
	r.SetQuestion(zone, dns.TypeDNSKEY)
	w := &keyQueryWriter{}
	if _, err := signer.ServeDNS(context.Background(), w, r); err != nil {
		return nil, err
	}
	if w.Msg == nil {
		return nil, fmt.Errorf("the dnssec plugin gave no DNSKEY answer")
	}
	var all, sep []*dns.DNSKEY
	for _, rr := range w.Msg.Answer {
		k, ok := rr.(*dns.DNSKEY)
		if !ok || !strings.EqualFold(k.Hdr.Name, zone) || k.Flags&dns.ZONE == 0 {
			continue
		}
		all = append(all, k)
		if k.Flags&dns.SEP != 0 {
			sep = append(sep, k)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("the dnssec plugin does not sign it")
	}
	if len(sep) > 0 {
		return sep, nil
	}
	return all, nil
}

// cdsRecords returns the CDS (SHA-256 digests) and CDNSKEY records of keys
// at zone, or the delete records of the cds delete option.
func (g *Gateway) cdsRecords(zone string, keys []*dns.DNSKEY) (cds, cdnskey []dns.RR) {
	hdr := func(t uint16) dns.RR_Header {
		return dns.RR_Header{Name: zone, Rrtype: t, Class: dns.ClassINET, Ttl: g.ttl}
	}
	if g.cdsOpt.remove {
		return []dns.RR{&dns.CDS{DS: dns.DS{Hdr: hdr(dns.TypeCDS), Digest: "00"}}},
			[]dns.RR{&dns.CDNSKEY{DNSKEY: dns.DNSKEY{Hdr: hdr(dns.TypeCDNSKEY), Protocol: 3, PublicKey: "AA=="}}}
	}
	for _, k := range keys {
		k = dns.Copy(k).(*dns.DNSKEY)
		k.Hdr.Name = zone
		ds := k.ToDS(dns.SHA256)
		if ds == nil {
			continue
		}
		c := &dns.CDS{DS: *ds}
		c.Hdr = hdr(dns.TypeCDS)
		cds = append(cds, c)
		ck := &dns.CDNSKEY{DNSKEY: *k}
		ck.Hdr = hdr(dns.TypeCDNSKEY)
		cdnskey = append(cdnskey, ck)
	}
	return cds, cdnskey
}

// cdsAnswer returns the CDS or CDNSKEY RRset asked for at the apex of zone
// zi, or nil.
func (g *Gateway) cdsAnswer(zi int, qname string, qtype uint16) []dns.RR {
	if qtype != dns.TypeCDS && qtype != dns.TypeCDNSKEY {
		return nil
	}
	sets := g.cds.Load()
	if sets == nil || !strings.EqualFold(qname, g.Zones[zi]) {
		return nil
	}
	if qtype == dns.TypeCDS {
		return sets.cds[zi]
	}
	return sets.cdnskey[zi]
}

// keyQueryWriter takes the dnssec plugin's answer to the DNSKEY question that
// startCDS asks it from within the process.
type keyQueryWriter struct{ Msg *dns.Msg }

var loopback = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}

func (w *keyQueryWriter) WriteMsg(m *dns.Msg) error { w.Msg = m; return nil }
func (w *keyQueryWriter) Write(b []byte) (int, error) {
	w.Msg = new(dns.Msg)
	return len(b), w.Msg.Unpack(b)
}
func (w *keyQueryWriter) LocalAddr() net.Addr  { return loopback }
func (w *keyQueryWriter) RemoteAddr() net.Addr { return loopback }
func (w *keyQueryWriter) Close() error         { return nil }
func (w *keyQueryWriter) TsigStatus() error    { return nil }
func (w *keyQueryWriter) TsigTimersOnly(bool)  {}
func (w *keyQueryWriter) Hijack()              {}
func (w *keyQueryWriter) Network() string      { return "udp" }
