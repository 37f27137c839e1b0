package watch

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Whether a controller's view of its cluster is whole, for the decisions
// that must not be made on part of it (who owns a name, for dynamic
// updates): the query path serves what it has, these fail closed.

// setUnread records why the kind of w is not read (nil: it is now).
func (c *Controller) setUnread(w *watched, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unread == nil {
		c.unread = map[*watched]error{}
	}
	if err == nil {
		delete(c.unread, w)
		return
	}
	c.unread[w] = err
}

// Complete reports whether the controller holds every object of its kinds:
// it has synced, no kind is refused by the API server (RBAC) or failing (a
// kind the cluster does not serve has no objects, and counts as read), and
// every informer has heard from the API server within the last within.
// Otherwise it says what is missing.
func (c *Controller) Complete(within time.Duration) (bool, string) {
	select {
	case <-c.syncedCh:
	default:
		return false, "its informers have not synced yet"
	}
	c.mu.Lock()
	for w, err := range c.unread {
		if errors.Is(err, errNotServed) || apierrors.IsNotFound(err) {
			continue
		}
		c.mu.Unlock()
		return false, fmt.Sprintf("%s cannot be read: %v", w.what(), err)
	}
	c.mu.Unlock()
	missing := c.stores.check(func(w *watched) string {
		switch {
		case w.api == nil:
			return ""
		case w.synced == nil || !w.synced():
			return w.what() + " has not synced yet"
		case !w.api.IsAllowed():
			return w.what() + " is refused by the API server"
		}
		if d := w.api.SinceContact(); d > within {
			return fmt.Sprintf("no contact with the API server for %s (%s)", d.Round(time.Second), w.what())
		}
		return ""
	})
	return missing == "", missing
}

// SinceContact is how long ago the controller last heard from the API
// server: an event or a bookmark of any informer, a successful list or
// watch, or a Ping, its own or one of another controller sharing its
// informers (the instance a reload replaces); false before any informer
// runs. An open watch on a silent connection does not count.
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
	return least, ok
}

// Ping lists one object of a running informer's kind and, when the API
// server answers, counts it as contact (SinceContact) in the state of every
// informer the controller uses: it tells a quiet API server from one that
// has gone silent without closing its connections. The informers' state is
// shared, so the blocks of a reloaded Corefile, which join the informers of
// the instance they replace, know of its pings from their first look.
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
	c.mu.Lock()
	for _, s := range c.states {
		s.Heard()
	}
	c.mu.Unlock()
	return nil
}
