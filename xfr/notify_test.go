package xfr

import (
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// TestReadTargets: the transfer plugin's stanzas as CoreDNS parsed them:
// zones, the addresses with their ports, "*", the source address; the
// stanza of the longest zone holding a name.
func TestReadTargets(t *testing.T) {
	tr := testutil.TransferPlugin(t, "transfer example.com {\n to 192.0.2.1 192.0.2.2:5300 *\n source 127.0.0.1\n}\ntransfer sub.example.com example.org {\n to 192.0.2.3\n}", nil)
	sets, ok := readTargets(tr)
	if !ok || len(sets) != 2 {
		t.Fatalf("readTargets: %v %+v", ok, sets)
	}
	if got := sets[0]; !slices.Equal(got.zones, []string{"example.com."}) || !slices.Equal(got.to, []string{"192.0.2.1:53", "192.0.2.2:5300", "*"}) || !got.source.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("first stanza: %+v", got)
	}
	if got := sets[1]; !slices.Equal(got.zones, []string{"sub.example.com.", "example.org."}) || !slices.Equal(got.to, []string{"192.0.2.3:53"}) || got.source != nil {
		t.Errorf("second stanza: %+v", got)
	}
	for name, want := range map[string]int{"example.com.": 0, "www.example.com.": 0, "sub.example.com.": 1, "a.sub.example.com.": 1, "example.org.": 1, "example.net.": -1} {
		got := longestMatch(sets, name)
		if want < 0 && got != nil || want >= 0 && got != &sets[want] {
			t.Errorf("the stanza of %s: %+v, want number %d", name, got, want)
		}
	}
	if _, ok := readTargets(nil); ok {
		t.Error("readTargets(nil): ok")
	}
}

// secondary is a NOTIFY target of the tests: it counts the NOTIFYs it
// receives and answers them with rcode, or never when dead.
type secondary struct {
	addr     string
	received atomic.Int32
	dead     bool
	drop     int32 // the first drop NOTIFYs get no answer
	rcode    int
}

func startSecondary(t *testing.T, s *secondary) *secondary {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = pc.LocalAddr().String()
	var wg sync.WaitGroup
	t.Cleanup(func() { pc.Close(); wg.Wait() })
	wg.Go(func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			m := new(dns.Msg)
			if m.Unpack(buf[:n]) != nil || m.Opcode != dns.OpcodeNotify {
				continue
			}
			if got := s.received.Add(1); s.dead || got <= s.drop {
				continue
			}
			r := new(dns.Msg)
			r.SetRcode(m, s.rcode)
			out, _ := r.Pack()
			pc.WriteTo(out, from)
		}
	})
	return s
}

// shortNotify makes NOTIFY's timeout short for a test.
func shortNotify(t *testing.T) {
	t.Helper()
	timeout := notifyTimeout
	notifyTimeout = 100 * time.Millisecond
	t.Cleanup(func() { notifyTimeout = timeout })
}

// idle waits until n has no NOTIFY under way.
func idle(t *testing.T, n *Notifier) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		n.mu.Lock()
		busy := len(n.sending)
		n.mu.Unlock()
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d NOTIFYs still under way after 10s", busy)
		}
	}
}

// TestNotifyParallel: a secondary that never answers, listed first, delays
// no other: every other secondary has its NOTIFY before the dead one's
// tries are over. Each secondary gets its own tries: one that drops the
// first NOTIFY gets the second.
func TestNotifyParallel(t *testing.T) {
	shortNotify(t)
	dead := startSecondary(t, &secondary{dead: true})
	live := []*secondary{startSecondary(t, &secondary{}), startSecondary(t, &secondary{drop: 1}), startSecondary(t, &secondary{})}
	to := dead.addr
	for _, s := range live {
		to += " " + s.addr
	}
	n := &Notifier{}
	n.Use(testutil.TransferPlugin(t, "transfer example.com {\n to "+to+"\n}", nil))
	n.Notify("example.com.")
	for deadline := time.Now().Add(10 * time.Second); slices.ContainsFunc(live, func(s *secondary) bool { return s.received.Load() < 1+s.drop }); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the live secondaries not notified after 10s")
		}
	}
	if got := dead.received.Load(); got >= int32(notifyTries) {
		t.Errorf("the others were notified only after the dead secondary's %d tries", got)
	}
	idle(t, n)
	if got := dead.received.Load(); got != int32(notifyTries) {
		t.Errorf("the dead secondary got %d tries, want %d", got, notifyTries)
	}
	for i, s := range live {
		if got := s.received.Load(); got != 1+s.drop {
			t.Errorf("secondary %d got %d NOTIFYs, want %d", i, got, 1+s.drop)
		}
	}
}

// TestNotifyCoalesced: NOTIFYs asked while one to a secondary is under way
// make one more, sent when it ends (the secondary hears of the last serial),
// not one each.
func TestNotifyCoalesced(t *testing.T) {
	shortNotify(t)
	dead := startSecondary(t, &secondary{dead: true})
	n := &Notifier{}
	n.Use(testutil.TransferPlugin(t, "transfer example.com {\n to "+dead.addr+"\n}", nil))
	for range 5 {
		n.Notify("example.com.")
	}
	idle(t, n)
	if got := dead.received.Load(); got != 2*int32(notifyTries) {
		t.Errorf("5 NOTIFYs asked during the first: %d sent, want two rounds of %d", got, notifyTries)
	}
}

// TestNotifyRefused: a secondary that answers another rcode than NOERROR is
// tried notifyTries times.
func TestNotifyRefused(t *testing.T) {
	shortNotify(t)
	refusing := startSecondary(t, &secondary{rcode: dns.RcodeRefused})
	n := &Notifier{}
	n.Use(testutil.TransferPlugin(t, "transfer example.com {\n to "+refusing.addr+"\n}", nil))
	n.Notify("example.com.")
	idle(t, n)
	if got := refusing.received.Load(); got != int32(notifyTries) {
		t.Errorf("%d tries, want %d", got, notifyTries)
	}
	if err := notifyOne("example.com.", refusing.addr, nil); err == nil || err.Error() != "not accepted by "+refusing.addr+": rcode REFUSED" {
		t.Errorf("notifyOne: %v", err)
	}
}
