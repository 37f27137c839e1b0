package fleet

import (
	"bytes"
	golog "log"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
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

// downRecorder is an index that records every cluster set down.
type downRecorder struct {
	*index.Index
	downs atomic.Int32
}

func (d *downRecorder) SetDown(prefix string, down bool) {
	if down {
		d.downs.Add(1)
	}
	d.Index.SetDown(prefix, down)
}

// lockedWriter is a log output that goroutines may write while the test reads it.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestReloadKeepsContact: a reload starts the clusters of the new Corefile,
// which join the informers of the old ones, and then stops the old ones. A
// quiet cluster (no event for longer than failover, its API server answering
// the pings) is neither logged as silent nor failed over by the new
// instance, reload after reload.
func TestReloadKeepsContact(t *testing.T) {
	var logged lockedWriter
	golog.SetOutput(&logged)
	defer golog.SetOutput(os.Stderr)
	a, b := fake.NewSimpleClientset(), fake.NewSimpleClientset()
	create(t, a, testutil.ClaimingService("apps", "web", 100, "web.example.com", "192.0.2.1"))
	create(t, b, testutil.ClaimingService("apps", "web", 200, "web.example.com", "192.0.2.2"))
	const failover = 300 * time.Millisecond
	primary := watchtest.Expect(t, "NOERROR", []string{"web.example.com. 60 IN A 192.0.2.1"})
	instance := func() (*testFleet, *downRecorder) {
		tf := newTestFleet(t, "example.com.")
		rec := &downRecorder{Index: tf.ix}
		for i, client := range []kubernetes.Interface{a, b} {
			cfg := testConfig("example.com.")
			cfg.Priority = int32(i + 1)
			cfg.Failover = failover
			name := []string{"a", "b"}[i]
			tf.Add(NewCluster(name, cfg, watchtest.API{Core: client, Share: name}, rec, false))
		}
		tf.start(t)
		return tf, rec
	}
	old, _ := instance()
	old.answers(t, "web.example.com.", dns.TypeA, primary)
	for reload := range 3 {
		time.Sleep(3 * failover) // quiet: no event since the list, only pings
		tf, rec := instance()
		old.stop()
		old = tf
		for end := time.Now().Add(2 * failover); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if got := watchtest.Answer(tf.ix, "web.example.com.", dns.TypeA); got != primary {
				t.Fatalf("reload %d: got %s, want the primary", reload, got)
			}
		}
		if n := rec.downs.Load(); n != 0 {
			t.Errorf("reload %d: a cluster set down %d times", reload, n)
		}
	}
	if strings.Contains(logged.String(), "has not answered") {
		t.Errorf("a quiet cluster logged as silent after a reload:\n%s", logged.String())
	}
}
