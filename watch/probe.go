package watch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// prober finds out whether, and at which version, the cluster serves and
// allows the kinds of a controller's informers, before they start and again
// while they are disabled.
type prober struct {
	api      API
	timing   Timing
	stop     <-chan struct{}       // closed when the controller stops
	joinable func(w *watched) bool // a running informer of w's key can be joined without a list (shared.go)
}

// errSlow: a kind still failed with a transient error when the startup wait
// ended while other kinds worked. It is retried with the disabled kinds.
var errSlow = errors.New("still failing at the end of the startup wait")

// all probes every watched kind at once, so that a kind whose listing
// fails (a CRD's conversion webhook down, say) delays no other. It returns
// each kind's outcome once every kind has one, or at most startupWait after
// the first kind worked: the kinds still failing then get errSlow. While no
// kind works (the API server is down) it waits on: there is nothing to serve
// anyway, and the kinds all start within a second of the API's return.
func (p *prober) all(ws []*watched) []error {
	errs := make([]error, len(ws))
	type outcome struct {
		i   int
		err error
	}
	results := make(chan outcome, len(ws))
	giveUp := make(chan struct{})
	for i, w := range ws {
		// The channel is passed, not the variable: the loop below sets the
		// variable to nil once it is closed, and a probe that starts late
		// must still see it closed.
		go func(giveUp <-chan struct{}) { results <- outcome{i, p.probe(w, giveUp)} }(giveUp)
	}
	var deadline <-chan time.Time
	for pending := len(ws); pending > 0; {
		select {
		case r := <-results:
			errs[r.i] = r.err
			pending--
			if r.err == nil && deadline == nil && giveUp != nil { // the wait ends once
				timer := time.NewTimer(p.timing.StartupWait)
				defer timer.Stop()
				deadline = timer.C
			}
		case <-deadline:
			close(giveUp)
			deadline, giveUp = nil, nil // fired once; the rest return errSlow
		}
	}
	if giveUp != nil {
		close(giveUp)
	}
	return errs
}

var errStopped = errors.New("stopped")

// probe lists one object of the kind, retrying transient errors until it
// works, the error is permanent (not served), or the controller stops.
// The waits are the guard's (see informer.Guard), so that a server started while
// the API server is down syncs within about a second of its return.
// A refusal (403, 401) is retried as well until it has lasted the refusal
// grace: a starting API server refuses every request until its authorizer
// has loaded the RBAC rules, and a kind disabled then would deny its names
// (NXDOMAIN) until the next probe. giveUp (another kind works, the startup
// wait is over) ends the retries of other errors, not of a refusal in its
// grace.
func (p *prober) probe(w *watched, giveUp <-chan struct{}) error {
	var refusedSince time.Time
	for n := 0; ; n++ {
		err := p.once(w)
		if err == nil || apierrors.IsNotFound(err) || errors.Is(err, errNotServed) {
			return err
		}
		stop := giveUp
		if refused := apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err); refused {
			if refusedSince.IsZero() {
				refusedSince = time.Now()
			}
			if time.Since(refusedSince) >= p.timing.RefusalGrace {
				return err
			}
			stop = nil
		}
		wait := p.timing.Guard.Backoff(n, err)
		if n == 0 {
			log.Warningf("listing %s: %v; retrying until it works", w.what(), err)
		}
		select {
		case <-p.stop:
			return errStopped
		case <-stop:
			return fmt.Errorf("%w: %v", errSlow, err)
		case <-time.After(wait):
		}
	}
}

// once probes the kind of w once: the newest version the cluster serves,
// when it has several, then a list of one object of it, unless a running
// informer of the same key can be joined.
func (p *prober) once(w *watched) error {
	if len(w.Kind.Older) > 0 {
		v, err := p.servedVersion(w.Kind)
		if err != nil {
			return err
		}
		if v == nil {
			return notServedError(w.Kind)
		}
		w.Version = v
	}
	if p.joinable(w) {
		return nil
	}
	return p.list(w)
}

// list lists one object of the version of w.
func (p *prober) list(w *watched) error {
	list, _ := p.api.ListWatch(w.Version, w.Namespace)
	opts := metav1.ListOptions{Limit: 1}
	w.Options(&opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := list(ctx, opts)
	if apierrors.IsNotFound(err) {
		return p.notServed(w.Version, err)
	}
	return err
}

// notServed explains a kind the API server does not serve: which versions of
// its group it does serve, if any (a CRD of another Gateway API release).
func (p *prober) notServed(k *source.Kind, err error) error {
	group, version, found := strings.Cut(k.GroupVersion, "/")
	if !found {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, derr := p.api.ServerGroups(ctx)
	if derr != nil {
		return err
	}
	for _, g := range groups.Groups {
		if g.Name != group {
			continue
		}
		var versions []string
		for _, v := range g.Versions {
			versions = append(versions, v.Version)
		}
		return fmt.Errorf("%w: %s is served only at versions %s, not %s (install CRDs that serve %s)", err, group, strings.Join(versions, ", "), version, k.GroupVersion)
	}
	return fmt.Errorf("%w: API group %s is not installed", err, group)
}
