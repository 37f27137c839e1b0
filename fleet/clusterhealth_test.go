package fleet

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/watch"
	"github.com/seed-e581d630/k8s_gateway/watch/watchtest"
)

// TestFailoverFromLastContact: cluster a's watches stay open while its API
// server says nothing. A quiet API server that answers keeps a primary; one
// that stops answering without closing its connections (each request hangs)
// fails over about failover after it went quiet, not when the transport
// notices; and a cluster that answers again is primary again.
func TestFailoverFromLastContact(t *testing.T) {
	a, b := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	// Black-holed when hole is set: every request of a hangs until it is
	// closed. The reactor is in place before the informers start (the fake's
	// reaction chain is not safe to change while it serves).
	var hole atomic.Pointer[chan struct{}]
	a.PrependReactor("*", "*", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		if h := hole.Load(); h != nil {
			<-*h
		}
		return false, nil, nil
	})
	const failover = time.Second
	tf, primary, standby := startPrimaryAndStandby(t, a, b, func(cfg *watch.Config) { cfg.Failover = failover })

	// Quiet but answering: still the primary after several failover times.
	for end := time.Now().Add(3 * failover); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if got := watchtest.Answer(tf.ix, "web.example.com.", dns.TypeA); got != primary {
			t.Fatalf("a quiet API server that answers: got %s, want the primary", got)
		}
	}

	// Black-holed: every request hangs until released.
	release := make(chan struct{})
	hole.Store(&release)
	quiet := time.Now()
	tf.answers(t, "web.example.com.", dns.TypeA, standby)
	// The last contact was at most a ping interval (failover/3) before.
	if d := time.Since(quiet); d < failover*2/3 {
		t.Errorf("failed over %s after the silence began, before failover %s", d, failover)
	}
	hole.Store(nil)
	close(release)
	tf.answers(t, "web.example.com.", dns.TypeA, primary)
}
