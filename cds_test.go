package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin/dnssec"
	"github.com/coredns/coredns/plugin/pkg/cache"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
)

// cdsKey makes an ECDSA P-256 key of zone with the given flags, as
// dnssec-keygen writes it, and returns it parsed by the dnssec plugin.
func cdsKey(t *testing.T, zone string, flags uint16) *dnssec.DNSKEY {
	t.Helper()
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
		Flags: flags, Protocol: 3, Algorithm: dns.ECDSAP256SHA256}
	priv, err := k.Generate(256)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pub, private := filepath.Join(dir, "K.key"), filepath.Join(dir, "K.private")
	if err := os.WriteFile(pub, []byte(k.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(private, []byte(k.PrivateKeyString(priv)), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := dnssec.ParseKeyFile(pub, private)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func TestCDSParse(t *testing.T) {
	for corefile, want := range map[string]string{
		"k8s_gateway example.com {\n cds\n}":          "",
		"k8s_gateway example.com {\n cds delete\n}":   "",
		"k8s_gateway example.com {\n cds remove\n}":   "cds [delete]",
		"k8s_gateway example.com {\n cds delete x\n}": "cds [delete]",
	} {
		_, err := parse(caddy.NewTestController("dns", corefile))
		if (err == nil) != (want == "") || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: error %v, want %q", corefile, err, want)
		}
	}
}

func TestCDS(t *testing.T) {
	zones := []string{"example.com.", "example.org."}
	ksk, zsk := cdsKey(t, "example.com.", dns.ZONE|dns.SEP), cdsKey(t, "example.com.", dns.ZONE)
	tests := []struct {
		name    string
		keys    []*dnssec.DNSKEY
		remove  bool
		cds     []*dnssec.DNSKEY // the keys the CDS point at
		wantErr string
	}{
		{name: "KSK and ZSK: the KSK only", keys: []*dnssec.DNSKEY{ksk, zsk},
			cds: []*dnssec.DNSKEY{ksk}},
		{name: "a ZSK alone: it", keys: []*dnssec.DNSKEY{zsk}, cds: []*dnssec.DNSKEY{zsk}},
		{name: "delete", keys: []*dnssec.DNSKEY{ksk}, remove: true, cds: []*dnssec.DNSKEY{nil}},
		{name: "no dnssec plugin", wantErr: "no dnssec plugin"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := xtGateway(t, zones, map[string][]string{"svc": {"www.example.com. 60 IN A 192.0.2.1"}})
			g.cds.on, g.cds.remove = true, tc.remove
			var signer *dnssec.Dnssec
			if tc.keys != nil {
				d := dnssec.New(zones, tc.keys, false, g, cache.New[[]dns.RR](16))
				signer = &d
			}
			var err error
			if signer != nil {
				err = g.cds.start(signer, g.Zones, g.ttl)
			} else {
				err = g.cds.start(nil, g.Zones, g.ttl)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, zone := range zones {
				m := cdsQuery(t, g, zone, dns.TypeCDS)
				var got, want []string
				for _, rr := range m.Answer {
					got = append(got, strings.ToUpper(rr.(*dns.CDS).Digest))
				}
				for _, k := range tc.cds {
					if k == nil {
						want = append(want, "00")
						continue
					}
					at := dns.Copy(k.K).(*dns.DNSKEY)
					at.Hdr.Name = zone
					want = append(want, strings.ToUpper(at.ToDS(dns.SHA256).Digest))
				}
				if strings.Join(got, " ") != strings.Join(want, " ") || !m.Authoritative || m.Rcode != dns.RcodeSuccess {
					t.Errorf("%s CDS: %v (rcode %d, aa %v), want digests %v", zone, m.Answer, m.Rcode, m.Authoritative, want)
				}
				k := cdsQuery(t, g, zone, dns.TypeCDNSKEY)
				if len(k.Answer) != len(tc.cds) {
					t.Errorf("%s CDNSKEY: %v, want %d records", zone, k.Answer, len(tc.cds))
				}
				for _, rr := range k.Answer {
					ck := rr.(*dns.CDNSKEY)
					if tc.remove && (ck.Algorithm != 0 || ck.PublicKey != "AA==" || ck.Protocol != 3) {
						t.Errorf("delete CDNSKEY %v", ck)
					}
					if !tc.remove && ck.PublicKey != tc.keys[0].K.PublicKey {
						t.Errorf("CDNSKEY %v is not the key", ck)
					}
				}
			}
			// Below the apex, and other types: the index answers as before.
			if m := cdsQuery(t, g, "www.example.com.", dns.TypeCDS); len(m.Answer) != 0 || m.Rcode != dns.RcodeSuccess {
				t.Errorf("CDS below the apex: %v", m)
			}
			if m := cdsQuery(t, g, "www.example.com.", dns.TypeA); len(m.Answer) != 1 {
				t.Errorf("A: %v", m)
			}
		})
	}
}

func cdsQuery(t *testing.T, g *Gateway, name string, qtype uint16) *dns.Msg {
	t.Helper()
	r := new(dns.Msg)
	r.SetQuestion(name, qtype)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := g.ServeDNS(context.Background(), rec, r); err != nil {
		t.Fatal(err)
	}
	if rec.Msg == nil {
		t.Fatalf("%s: no reply", name)
	}
	return rec.Msg
}
