package acmeupdate

import (
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
		r.Extra = nil
		r.Opcode = dns.OpcodeUpdate
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
