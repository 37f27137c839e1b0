package watch

import (
	"errors"
	"time"
)

// errSlow: a kind still failed with a transient error when the startup wait
// ended while other kinds worked. It is retried with the disabled kinds.
var errSlow = errors.New("still failing at the end of the startup wait")

// probeAll probes every watched kind at once, so that a kind whose listing
// fails (a CRD's conversion webhook down, say) delays no other. It returns
// each kind's outcome once every kind has one, or at most startupWait after
// the first kind worked: the kinds still failing then get errSlow. While no
// kind works (the API server is down) it waits on: there is nothing to serve
// anyway, and the kinds all start within a second of the API's return.
func (c *Controller) probeAll(ws []*watched) []error {
	errs := make([]error, len(ws))
	type outcome struct {
		i   int
		err error
	}
	results := make(chan outcome, len(ws))
	giveUp := make(chan struct{})
	for i, w := range ws {
		go func() { results <- outcome{i, c.probe(w, giveUp)} }()
	}
	var deadline <-chan time.Time
	for pending := len(ws); pending > 0; {
		select {
		case r := <-results:
			errs[r.i] = r.err
			pending--
			if r.err == nil && deadline == nil {
				timer := time.NewTimer(c.cfg.Timing.StartupWait)
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
