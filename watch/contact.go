package watch

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SinceContact is how long ago the controller last heard from the API
// server: an event or a bookmark of any informer, a successful list or
// watch, or a Ping; false before any informer runs. An open watch on a
// silent connection does not count.
func (c *Controller) SinceContact() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var least time.Duration
	ok := false
	for _, s := range c.states {
		d := s.SinceHeard()
		if !ok || d < least {
			least, ok = d, true
		}
	}
	if p := c.pinged.Load(); ok && p != 0 {
		least = min(least, time.Since(time.Unix(0, p)))
	}
	return least, ok
}

// Ping lists one object of a running informer's kind and, when the API
// server answers, counts it as contact (SinceContact): it tells a quiet API
// server from one that has gone silent without closing its connections.
func (c *Controller) Ping(ctx context.Context) error {
	ws := c.stores.running(func(*watched) bool { return true })
	if len(ws) == 0 {
		return errors.New("no informer runs yet")
	}
	w := ws[0]
	list, _ := c.api.ListWatch(w.Version, w.Namespace)
	opts := metav1.ListOptions{Limit: 1}
	w.Options(&opts)
	if _, err := list(ctx, opts); err != nil {
		return err
	}
	c.pinged.Store(time.Now().UnixNano())
	return nil
}
