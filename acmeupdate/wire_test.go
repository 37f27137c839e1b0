package acmeupdate

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Updates as BIND 9's nsupdate sent them, signed with secretA (key "k.",
// hmac-sha256): it writes some names whole that it could compress, and
// points others to an earlier name.
var nsupdateWire = []string{
	// prereq nxrrset _acme-challenge.team-a.example.com TXT; update add ... TXT x
	"44ba28000001000100010001076578616d706c6503636f6d00000600010f5f61636d652d6368616c6c656e6765067465616d2d61076578616d706c6503636f6d00001000fe000000000000c01d001000010000003c00020178016b0000fa00ff00000000003d0b686d61632d7368613235360000006b07d14d012c0020bdb706566b09f3d40f09960264e7402badd6c1d6d8851dcbc0b2f7f019d98ffc44ba00000000",
	// prereq yxdomain nope.example.com; update add ...
	"5a6028000001000100010001076578616d706c6503636f6d0000060001046e6f7065c00c00ff00ff0000000000000f5f61636d652d6368616c6c656e6765067465616d2d61076578616d706c6503636f6d00001000010000003c00020178016b0000fa00ff00000000003d0b686d61632d7368613235360000006b07d14d012c0020cc363a8a113869dba6e8244dda21bc3db39de9c89bf6ef97a85b186b353fa4f85a6000000000",
	// prereq yxrrset _acme-challenge.team-a.example.com TXT v1; update add ...
	"c2bf28000001000100010001076578616d706c6503636f6d00000600010f5f61636d652d6368616c6c656e6765067465616d2d61076578616d706c6503636f6d0000100001000000000003027631c01d001000010000003c00020178016b0000fa00ff00000000003d0b686d61632d7368613235360000006b07d14d012c0020b773c40f6eca26e50368d98e489cc7aa82e0f58502a0eed0ba9568c0313e0fcac2bf00000000",
}

func TestMACOverClientEncodings(t *testing.T) {
	for i, h := range nsupdateWire {
		raw, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		r := new(dns.Msg)
		if err := r.Unpack(raw); err != nil {
			t.Fatal(err)
		}
		if !macMatches(r, secretA) {
			t.Errorf("nsupdate message %d: MAC not matched", i)
		}
		if macMatches(r, secretB) {
			t.Errorf("nsupdate message %d: matched with another secret", i)
		}
		r.Ns[0].(*dns.TXT).Txt[0] = "y" // the same bytes but one
		if macMatches(r, secretA) {
			t.Errorf("nsupdate message %d: MAC matched a changed message", i)
		}
	}
	// The dns package's own clients: compressed and not.
	for _, compress := range []bool{false, true} {
		m := updateMsg(testZone)
		m.Compress = compress
		m.NameUsed([]dns.RR{txt(t, "www.example.com.", 0, "x")})
		m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)})
		wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, time.Now())
		r := new(dns.Msg)
		if err := r.Unpack(wire); err != nil {
			t.Fatal(err)
		}
		if !macMatches(r, secretA) {
			t.Errorf("dns package client, compress=%v: MAC not matched", compress)
		}
	}
}

// TestMACLargeMessages: a message of many names from a client that
// compresses nothing, or everything, is found at once, however many choices
// the names would give.
func TestMACLargeMessages(t *testing.T) {
	for _, c := range []struct {
		compress bool
		tries    int
	}{{false, 1}, {true, 2}} {
		m := updateMsg(testZone)
		m.Compress = c.compress
		for i := range 16 {
			m.Insert([]dns.RR{txt(t, "_acme-challenge.n"+itoa(i)+".example.com.", 60, acmeValue)})
		}
		wire, _ := signed(t, m, keyA, dns.HmacSHA256, secretA, time.Now())
		r := new(dns.Msg)
		if err := r.Unpack(wire); err != nil {
			t.Fatal(err)
		}
		tries := 0
		ok := wireEncodings(r, func(buf []byte) bool {
			tries++
			return dns.TsigVerify(buf, secretA, "", false) == nil
		})
		if !ok || tries != c.tries {
			t.Errorf("compress=%v: found %v after %d tries, want after %d", c.compress, ok, tries, c.tries)
		}
	}
}
