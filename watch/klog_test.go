package watch

import (
	"bytes"
	"context"
	golog "log"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/internal/informer"
)

// TestMain routes klog before any test starts goroutines that log, as the
// plugin does in its init: klog.SetLogger must not run while client-go logs.
func TestMain(m *testing.M) {
	RouteKlog()
	os.Exit(m.Run())
}

// lockedBuffer collects log output written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

// TestLogPrefix: a line of watch's informers (a list retried) and a line of client-go
// (klog, routed by RouteKlog) both carry the plugin's prefix.
func TestLogPrefix(t *testing.T) {
	var out lockedBuffer
	golog.SetOutput(&out)
	defer golog.SetOutput(os.Stderr)

	calls := 0
	_, g := informer.New(informer.Config{
		Kind: "Service", What: "Service", Object: &corev1.Service{},
		Timing: GuardTiming{RetryInitial: time.Millisecond, RetryMax: time.Millisecond, ThrottledMax: time.Millisecond},
		List: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			if calls++; calls == 1 {
				return nil, syscall.ECONNREFUSED
			}
			return &corev1.ServiceList{}, nil
		},
	})
	if _, err := g.List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	close(stop)
	cache.WaitForNamedCacheSync("prefix-test", stop, func() bool { return true })

	want := map[string]string{
		"watch":     "listing Service: connection refused; retrying",
		"client-go": "client-go: Waiting for caches to sync",
	}
	for from, text := range want {
		found := false
		for _, l := range out.lines() {
			if strings.Contains(l, text) {
				found = true
				if !strings.Contains(l, "plugin/k8s_gateway: ") {
					t.Errorf("line from %s without the plugin prefix: %q", from, l)
				}
			}
		}
		if !found {
			t.Errorf("no line from %s containing %q in:\n%s", from, text, strings.Join(out.lines(), "\n"))
		}
	}
}
