package delegation

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/miekg/dns"
)

// Signer is what signs the zones: CoreDNS's dnssec plugin of the server
// block, asked for each zone's DNSKEY RRset from within the process.
type Signer interface {
	ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error)
}

// CDS holds the CDS and CDNSKEY RRsets (RFC 7344, RFC 8078) of a block's
// zones, for the keys their signer signs with, so that the parent (or a
// tool acting for it, such as dnssec-cds) can keep its DS records in step
// with the keys, rollovers included.
type CDS struct {
	zones        []string
	cds, cdnskey [][]dns.RR // by zone index
}

// NewCDS asks signer for the keys of each zone and returns their records,
// with ttl; remove publishes the delete records instead (RFC 8078 §4: CDS
// 0 0 0 00, CDNSKEY 0 3 0 AA==): the parent is asked to remove the DS,
// before the zones go unsigned. It fails when signer signs a zone with no
// key.
func NewCDS(signer Signer, zones []string, ttl uint32, remove bool) (*CDS, error) {
	c := &CDS{zones: zones, cds: make([][]dns.RR, len(zones)), cdnskey: make([][]dns.RR, len(zones))}
	for zi, zone := range zones {
		keys, err := signingKeys(signer, zone)
		if err != nil {
			return nil, fmt.Errorf("zone %s: %v", zone, err)
		}
		c.cds[zi], c.cdnskey[zi] = cdsRecords(zone, keys, ttl, remove)
	}
	return c, nil
}

// Answer returns the CDS or CDNSKEY RRset asked for at the apex of zone
// zi, or nil.
func (c *CDS) Answer(zi int, qname string, qtype uint16) []dns.RR {
	if qtype != dns.TypeCDS && qtype != dns.TypeCDNSKEY || c == nil || !strings.EqualFold(qname, c.zones[zi]) {
		return nil
	}
	if qtype == dns.TypeCDS {
		return c.cds[zi]
	}
	return c.cdnskey[zi]
}

// signingKeys asks the signer for the DNSKEY RRset of zone and returns its
// secure entry points (the keys a DS points at); all zone keys when none
// has the SEP flag, as the dnssec plugin then signs with each.
func signingKeys(signer Signer, zone string) (keys []*dns.DNSKEY, err error) {
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
// at zone, or the delete records.
func cdsRecords(zone string, keys []*dns.DNSKEY, ttl uint32, remove bool) (cds, cdnskey []dns.RR) {
	hdr := func(t uint16) dns.RR_Header {
		return dns.RR_Header{Name: zone, Rrtype: t, Class: dns.ClassINET, Ttl: ttl}
	}
	if remove {
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

// keyQueryWriter takes the signer's answer to the DNSKEY question that
// signingKeys asks it from within the process.
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
