package acmeupdate

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// FuzzUpdateMessage feeds arbitrary messages to the UPDATE path. The
// messages are signed with team-a's key after unpacking, so that the fuzzer
// reaches the parser, the prerequisites and the scope rather than stopping
// at TSIG. Whatever the input, the reply is written and nothing outside
// _acme-challenge TXT values of the namespace's own names is stored.
func FuzzUpdateMessage(f *testing.F) {
	seeds := []func(m *dns.Msg){
		func(m *dns.Msg) { m.Insert([]dns.RR{txt(f, challengeA, 60, acmeValue)}) },
		func(m *dns.Msg) { m.Remove([]dns.RR{txt(f, challengeA, 0, acmeValue)}) },
		func(m *dns.Msg) { m.RemoveRRset([]dns.RR{txt(f, challengeA, 0, "x")}) },
		func(m *dns.Msg) { m.RemoveName([]dns.RR{txt(f, challengeA, 0, "x")}) },
		func(m *dns.Msg) { m.NameUsed([]dns.RR{txt(f, "www.example.com.", 0, "x")}) },
		func(m *dns.Msg) { m.Used([]dns.RR{mustRR(f, "www.example.com. 0 IN A 192.0.2.1")}) },
		func(m *dns.Msg) { m.Insert([]dns.RR{mustRR(f, challengeA+" 60 IN A 192.0.2.1")}) },
	}
	for _, s := range seeds {
		m := updateMsg(testZone)
		s(m)
		buf, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(buf)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := new(dns.Msg)
		if r.Unpack(data) != nil {
			return
		}
		// A response is never answered (request.go): clear QR so that the
		// input reaches the parser.
		r.Extra = nil
		r.Opcode, r.Response = dns.OpcodeUpdate, false
		wire, err := r.Pack()
		if err != nil {
			return
		}
		signedMsg := new(dns.Msg)
		if signedMsg.Unpack(wire) != nil {
			return
		}
		signedMsg.SetTsig(keyA, dns.HmacSHA256, 300, time.Now().Unix())
		wire, _, err = dns.TsigGenerate(signedMsg, secretA, "", false)
		if err != nil {
			return
		}
		u, store, _ := testUpdater(t, existing(t))
		reply, _ := serve(t, u, wire)
		if reply.Rcode == dns.RcodeSuccess && len(r.Ns) > 0 && len(store.objs) == 0 && !onlyDeletes(r.Ns) {
			t.Fatalf("NOERROR for an update that stored nothing: %v", r)
		}
		for k, values := range store.objs {
			if len(k) < len("team-a/"+ChallengeLabel) || k[:len("team-a/"+ChallengeLabel)] != "team-a/"+ChallengeLabel {
				t.Fatalf("stored %q at %s", values, k)
			}
			for _, v := range values {
				if len(v) == 0 || len(v) > DefaultLimits.MaxTXT {
					t.Fatalf("stored value %q", v)
				}
			}
		}
	})
}

func onlyDeletes(rrs []dns.RR) bool {
	for _, rr := range rrs {
		if rr.Header().Class == dns.ClassINET {
			return false
		}
	}
	return true
}

// FuzzSignedUpdate feeds whole UPDATE messages with TSIG to Handle: random
// sections (from the input), signed with one of the keys (valid key
// names), compressed or not, and forged (one bit of the MAC flipped) when
// the input says so. Whatever the input: at most one MAC is computed, none
// for a message beyond the size limit, and a forged message changes nothing
// and is never answered NOERROR.
func FuzzSignedUpdate(f *testing.F) {
	for _, s := range []func(m *dns.Msg){
		func(m *dns.Msg) { m.Insert([]dns.RR{txt(f, challengeA, 60, acmeValue)}) },
		func(m *dns.Msg) {
			m.NameUsed([]dns.RR{txt(f, "www.example.com.", 0, "x")})
			m.Insert([]dns.RR{txt(f, challengeA, 60, acmeValue)})
		},
		func(m *dns.Msg) { m.Remove([]dns.RR{txt(f, challengeA, 0, acmeValue)}) },
	} {
		m := updateMsg(testZone)
		s(m)
		buf, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(buf, false, uint8(0))
		f.Add(buf, true, uint8(1))
	}
	keys := []struct{ name, alg, secret string }{
		{keyA, dns.HmacSHA256, secretA}, {keyB, dns.HmacSHA512, secretB}, {keyA, dns.HmacSHA256, secretB},
	}
	f.Fuzz(func(t *testing.T, data []byte, forge bool, choice uint8) {
		r := new(dns.Msg)
		if r.Unpack(data) != nil {
			return
		}
		r.Opcode, r.Response = dns.OpcodeUpdate, false
		r.Extra = slices.DeleteFunc(r.Extra, func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeTSIG })
		r.Compress = choice&1 == 1
		k := keys[int(choice>>1)%len(keys)]
		r.SetTsig(k.name, k.alg, 300, time.Now().Unix())
		wire, _, err := dns.TsigGenerate(r, k.secret, "", false)
		if err != nil {
			return
		}
		forged := forge || k.secret == secretB && k.name == keyA
		if forge {
			wire[len(wire)-7] ^= 1 // the MAC's last byte: origid, error and other len follow
		}
		u, store, rejected := testUpdater(t, existing(t))
		before := macsComputed.Load()
		reply, proven := u.Handle(context.Background(), wire)
		macs := macsComputed.Load() - before
		if macs > 1 || len(wire) > u.cfg.Limits.MaxMessage && macs > 0 {
			t.Fatalf("%d MACs computed for a message of %d bytes", macs, len(wire))
		}
		if !forged {
			return
		}
		if len(store.objs) > 0 || len(*rejected) > 0 || proven {
			t.Fatalf("a forged message stored %v, reported %v, proved its key %v", store.objs, *rejected, proven)
		}
		m := new(dns.Msg)
		if reply != nil && m.Unpack(reply) == nil && m.Rcode == dns.RcodeSuccess {
			t.Fatal("a forged message answered NOERROR")
		}
	})
}
