package acmeupdate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/plog"
)

// log is the plugin's logger: every line carries plugin/k8s_gateway:.
var log = plog.Log

// EditFunc turns the TXT values (and TTL) of one owner name into new ones.
type EditFunc func(values []string, ttl uint32) ([]string, uint32, error)

// Store keeps the challenges in the cluster (see DNSEndpoints).
type Store interface {
	// Edit changes the values of the plugin's object for name in namespace:
	// edit gets its values (none when there is no object) and returns the new
	// ones; none removes the object. keyName is recorded on the object. The
	// Change is what the store really did (its values before and after).
	Edit(ctx context.Context, namespace, name, keyName string, edit EditFunc) (Change, error)
}

// Rejection is one refused update, for logs, metrics and Events.
type Rejection struct {
	Zone      string // "" when the zone section was not read
	Name      string // the first owner name at fault, if any
	Key       string // the key's name, "" when unsigned or unknown
	Namespace string // the key's namespace
	Source    string // where the key comes from (Key.Source)
	Reason    string // a Reason* constant
	Detail    string
	Rcode     int
}

func (r Rejection) String() string {
	return fmt.Sprintf("update refused (%s, %s): zone %q key %q namespace %q: %s",
		dns.RcodeToString[r.Rcode], r.Reason, r.Zone, r.Key, r.Namespace, r.Detail)
}

// Config configures an Updater.
type Config struct {
	Zones      []string // canonical
	Keys       *Keyring
	Zone       Zone
	Store      Store
	Authorizer Authorizer
	Limits     Limits
	// Fudge is the largest time difference accepted, in seconds (RFC 8945
	// recommends 300); a request's smaller fudge applies.
	Fudge uint16
	// RatePerMinute is the number of updates the keys of one namespace may
	// send a minute, together.
	RatePerMinute int
	// GlobalRatePerMinute is the number of updates all namespaces together
	// may send a minute; 10 × RatePerMinute when 0.
	GlobalRatePerMinute int
	// OverlayHold is how long an update is answered from the overlay while
	// the informer has not brought it back.
	OverlayHold time.Duration
	// Timeout bounds the API calls of one update.
	Timeout  time.Duration
	Now      func() time.Time
	OnReject func(Rejection)
	OnAccept func(zone, name, key, namespace string)
}

// Updater serves UPDATE messages (see the package doc).
type Updater struct {
	cfg     Config
	overlay *Overlay
	replays *replays
	rate    *rateLimit
	names   nameLocks // one update of a name at a time: prerequisites see the last one
	unauth  logLimit  // the log lines of unauthenticated refusals
}

// New returns an Updater; zero fields of cfg get defaults.
func New(cfg Config) *Updater {
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits
	}
	if cfg.Fudge == 0 {
		cfg.Fudge = 300
	}
	if cfg.OverlayHold == 0 {
		cfg.OverlayHold = 30 * time.Second
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Authorizer == nil {
		cfg.Authorizer = AuthorizerFunc(func(string, string, string) (bool, string) { return false, "no ownership policy" })
	}
	if cfg.GlobalRatePerMinute == 0 {
		cfg.GlobalRatePerMinute = 10 * cfg.RatePerMinute
	}
	rate := newRateLimit(cfg.RatePerMinute)
	rate.global = float64(cfg.GlobalRatePerMinute)
	return &Updater{
		cfg: cfg, overlay: newOverlay(cfg.OverlayHold), replays: newReplays(1 << 16), rate: rate,
		unauth: logLimit{every: time.Second, what: "unauthenticated refusals"},
	}
}

// Answer returns the TXT records to answer for qname from the overlay (see
// Overlay.Answer); zone holds the TXT records the index answers there. It
// takes no lock: it is on the query path of every TXT query.
func (u *Updater) Answer(qname string, zone []dns.RR) ([]dns.RR, bool) {
	return u.overlay.Answer(canonical(qname), zone, u.cfg.Now())
}

// process checks and applies an authenticated update of zone; nil means
// done. Only the updates naming one of the same names wait for each other.
func (u *Updater) process(ctx context.Context, r *dns.Msg, zone string, key Key, rej *Rejection, now time.Time) *failure {
	var touched []string
	for _, rr := range append(slices.Clip(r.Answer), r.Ns...) {
		touched = append(touched, canonical(rr.Header().Name))
	}
	if c, ok := u.cfg.Authorizer.(Completer); ok {
		if done, why := c.Complete(); !done {
			return fail(dns.RcodeServerFailure, ReasonIncomplete, "the cluster is not read completely: "+why)
		}
	}
	defer u.names.lock(touched)()
	view := u.view(now)
	if f := checkPrereqs(r.Answer, zone, view); f != nil {
		return f
	}
	if f := prescan(r.Ns, zone); f != nil {
		return f
	}
	ops, f := scope(r.Ns, zone, u.cfg.Limits)
	if f != nil {
		return f
	}
	var names []string
	for _, o := range ops {
		if !slices.Contains(names, o.name) {
			names = append(names, o.name)
		}
	}
	for _, name := range names {
		base := name[len(ChallengeLabel)+1:]
		if ok, why := u.cfg.Authorizer.MayChallenge(key.Namespace, zone, base); !ok {
			rej.Name = name
			return fail(dns.RcodeRefused, ReasonOwnership, why)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, u.cfg.Timeout)
	defer cancel()
	for _, name := range names {
		rej.Name = name
		if f := u.apply(ctx, zone, name, ops, key); f != nil {
			return f
		}
	}
	return nil
}

// apply writes the ops at one owner name and records in the overlay what
// the store really changed.
func (u *Updater) apply(ctx context.Context, zone, name string, ops []op, key Key) *failure {
	max := u.cfg.Limits.MaxValues
	edit := func(values []string, ttl uint32) ([]string, uint32, error) {
		values, ttl = applyOps(values, ttl, name, ops)
		if len(values) > max {
			return nil, 0, fail(dns.RcodeRefused, ReasonSize, "too many values at "+name)
		}
		return values, ttl, nil
	}
	change, err := u.cfg.Store.Edit(ctx, key.Namespace, name, key.Name, edit)
	if err != nil {
		var f *failure
		if errors.As(err, &f) {
			return f
		}
		return fail(dns.RcodeServerFailure, ReasonStorage, err.Error())
	}
	u.overlay.record(name, change, u.cfg.Now())
	appliedTotal.WithLabelValues(zone).Inc()
	log.Infof("update applied: %s TXT +%d -%d value(s), key %s (namespace %s)", name, len(change.Added), len(change.Removed), key.Name, key.Namespace)
	if u.cfg.OnAccept != nil {
		u.cfg.OnAccept(zone, name, key.Name, key.Namespace)
	}
	return nil
}

// applyOps applies the ops at name, in order, to values.
func applyOps(values []string, ttl uint32, name string, ops []op) ([]string, uint32) {
	values = slices.Clone(values)
	for _, o := range ops {
		if o.name != name {
			continue
		}
		switch o.kind {
		case opAdd:
			if !slices.Contains(values, o.value) {
				values = append(values, o.value)
			}
			ttl = o.ttl
		case opDelete:
			values = slices.DeleteFunc(values, func(v string) bool { return v == o.value })
		case opDeleteSet:
			values = nil
		}
	}
	return values, ttl
}

// view returns the zone with this replica's overlay applied to its TXT RRsets.
func (u *Updater) view(now time.Time) Zone {
	return ZoneFunc(func(name string, t uint16) []dns.RR {
		rrs := u.cfg.Zone.Records(name, t)
		if t != dns.TypeTXT && t != dns.TypeANY {
			return rrs
		}
		e := u.overlay.entry(name, now)
		if e == nil {
			return rrs
		}
		var txt []dns.RR
		for _, rr := range rrs {
			if rr.Header().Rrtype == dns.TypeTXT {
				txt = append(txt, rr)
			}
		}
		rrs = slices.DeleteFunc(slices.Clone(rrs), func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeTXT })
		return append(rrs, e.apply(name, txt)...)
	})
}
