package delegation

import (
	"context"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// fakeSigner answers DNSKEY questions with keys, as the dnssec plugin
// would; panics with boom when set.
type fakeSigner struct {
	keys []*dns.DNSKEY
	boom string
}

func (f fakeSigner) ServeDNS(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if f.boom != "" {
		panic(f.boom)
	}
	m := new(dns.Msg)
	m.SetReply(r)
	for _, k := range f.keys {
		k := dns.Copy(k).(*dns.DNSKEY)
		k.Hdr.Name = r.Question[0].Name
		m.Answer = append(m.Answer, k)
	}
	return dns.RcodeSuccess, w.WriteMsg(m)
}

// testKey returns a new ECDSA P-256 key with flags.
func testKey(t *testing.T, flags uint16) *dns.DNSKEY {
	t.Helper()
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: "example.com.", Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
		Flags: flags, Protocol: 3, Algorithm: dns.ECDSAP256SHA256}
	if _, err := k.Generate(256); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCDS: the CDS and CDNSKEY records point at the signer's SEP keys, or
// at all its zone keys when none has the flag; delete gives the RFC 8078
// delete records; a signer that signs a zone with no key, or fails, is an
// error; answers are at the apexes only, for the two types only.
func TestCDS(t *testing.T) {
	zones := []string{"example.com.", "example.org."}
	ksk, zsk := testKey(t, dns.ZONE|dns.SEP), testKey(t, dns.ZONE)
	for _, tc := range []struct {
		name   string
		signer fakeSigner
		remove bool
		want   []*dns.DNSKEY // the keys the records are of; nil: the delete records
		err    string
	}{
		{name: "KSK and ZSK: the KSK only", signer: fakeSigner{keys: []*dns.DNSKEY{ksk, zsk}}, want: []*dns.DNSKEY{ksk}},
		{name: "a ZSK alone: it", signer: fakeSigner{keys: []*dns.DNSKEY{zsk}}, want: []*dns.DNSKEY{zsk}},
		{name: "delete", signer: fakeSigner{keys: []*dns.DNSKEY{ksk}}, remove: true},
		{name: "no key", signer: fakeSigner{}, err: "zone example.com.: the dnssec plugin does not sign it"},
		{name: "a failing signer", signer: fakeSigner{boom: "no"}, err: "the dnssec plugin failed to answer DNSKEY: no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCDS(tc.signer, zones, 60, tc.remove)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for zi, zone := range zones {
				var want []string
				for _, k := range tc.want {
					at := dns.Copy(k).(*dns.DNSKEY)
					at.Hdr.Name = zone
					want = append(want, strings.ToUpper(at.ToDS(dns.SHA256).Digest))
				}
				if tc.remove {
					want = []string{"00"}
				}
				var got []string
				for _, rr := range c.Answer(zi, strings.ToUpper(zone), dns.TypeCDS) {
					got = append(got, strings.ToUpper(rr.(*dns.CDS).Digest))
					if rr.Header().Name != zone || rr.Header().Ttl != 60 {
						t.Errorf("%s CDS %s: not at the apex with the TTL", zone, rr)
					}
				}
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%s CDS digests %v, want %v", zone, got, want)
				}
				keys := c.Answer(zi, zone, dns.TypeCDNSKEY)
				if len(keys) != len(want) {
					t.Errorf("%s CDNSKEY: %v, want %d records", zone, keys, len(want))
				}
				for _, rr := range keys {
					ck := rr.(*dns.CDNSKEY)
					if tc.remove && (ck.Algorithm != 0 || ck.PublicKey != "AA==" || ck.Protocol != 3) {
						t.Errorf("delete CDNSKEY %v", ck)
					}
					if !tc.remove && ck.PublicKey != tc.want[0].PublicKey {
						t.Errorf("CDNSKEY %v is not the key", ck)
					}
				}
				if rrs := c.Answer(zi, "www."+zone, dns.TypeCDS); rrs != nil {
					t.Errorf("CDS below the apex: %v", rrs)
				}
				if rrs := c.Answer(zi, zone, dns.TypeDNSKEY); rrs != nil {
					t.Errorf("DNSKEY answered: %v", rrs)
				}
			}
		})
	}
	if rrs := (*CDS)(nil).Answer(0, "example.com.", dns.TypeCDS); rrs != nil {
		t.Errorf("without the option: %v", rrs)
	}
}
