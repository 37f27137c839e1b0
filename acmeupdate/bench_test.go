package acmeupdate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// forgedMsg returns an UPDATE of about size bytes, with team-a's key name and
// a MAC made with another secret.
func forgedMsg(b *testing.B, size int) []byte {
	b.Helper()
	build := func(fill int) []byte {
		m := updateMsg(testZone)
		var strs []string
		for fill > 0 {
			n := min(fill, 255)
			strs = append(strs, strings.Repeat("f", n))
			fill -= n + 1
		}
		m.Insert([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: challengeA, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: strs}})
		wire, _ := signed(b, m, keyA, dns.HmacSHA256, secretB, time.Now())
		return wire
	}
	base := len(build(1))
	return build(size - base)
}

// BenchmarkForgedUpdate: what a forged message (right key name, wrong MAC)
// costs Handle, by size. Over Limits.MaxMessage (4 KiB by default) it is
// refused on its header; "no limit" raises the limit to 64 KiB to show what
// the one MAC over the bytes would cost there.
func BenchmarkForgedUpdate(b *testing.B) {
	for _, limited := range []bool{true, false} {
		for _, size := range []int{512, 4096, 16 << 10, 65000} {
			name := fmt.Sprintf("%dB", size)
			if !limited {
				name += "/no_limit"
			}
			b.Run(name, func(b *testing.B) {
				u, _, _ := testUpdater(b, nil)
				if !limited {
					u.cfg.Limits.MaxMessage = 65535
				}
				msg := forgedMsg(b, size)
				b.SetBytes(int64(len(msg)))
				b.ReportAllocs()
				for b.Loop() {
					if reply, _ := u.Handle(context.Background(), msg); reply == nil {
						b.Fatal("no reply")
					}
				}
			})
		}
	}
}
