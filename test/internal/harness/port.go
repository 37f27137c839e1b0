package harness

import (
	"fmt"
	"net"
	"sync"
	"testing"
)

// handedOut are the ports FreePort returned: the kernel may hand a port
// closed a moment ago out again, and two servers of one test must not get
// the same one.
var handedOut sync.Map

// FreePort returns a loopback port that is free for both UDP and TCP, as a
// DNS server needs.
func FreePort(t testing.TB) int {
	t.Helper()
	for range 50 {
		l, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.LocalAddr().(*net.UDPAddr).Port
		l.Close()
		if _, taken := handedOut.Load(port); taken {
			continue
		}
		if tl, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			tl.Close()
			handedOut.Store(port, true)
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}
