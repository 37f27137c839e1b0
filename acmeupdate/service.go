package acmeupdate

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// IndexZone is the Zone of the plugin's index: snapshot returns the
// snapshot answering zone zi (nil when there is none yet). Names covered
// only by a wildcard do not exist here: prerequisites never expand wildcards.
func IndexZone(zones []string, snapshot func(zi int) *index.Snapshot) Zone {
	return ZoneFunc(func(name string, t uint16) []dns.RR {
		zi := index.ZoneOf(zones, name)
		if zi < 0 {
			return nil
		}
		snap := snapshot(zi)
		if snap == nil || (name != zones[zi] && !snap.Has(name)) {
			return nil // no such name: a wildcard does not make one (RFC 2136 §3.2)
		}
		answer, _, _, res := snap.Lookup(zi, name, t)
		if res != index.Success {
			return nil
		}
		var out []dns.RR
		for _, rr := range answer {
			if h := rr.Header(); sameName(h.Name, name) && (t == dns.TypeANY || h.Rrtype == t) {
				out = append(out, rr)
			}
		}
		return out
	})
}

// Service is what the plugin runs for an updates block: the Updater, the
// Secrets' keys and the janitor of expired challenges.
type Service struct {
	*Updater
	opts   *Options
	keys   *Keyring
	store  *DNSEndpoints
	listen *Listening
	cancel context.CancelFunc
	done   chan struct{}
}

// Wiring is what the plugin gives a Service.
type Wiring struct {
	Zones      []string
	Zone       Zone
	Authorizer Authorizer
	OnReject   func(Rejection)
}

// NewService returns the Service of opts; Start connects it to the cluster.
func NewService(opts *Options, w Wiring) *Service {
	keys := NewKeyring(opts.Keys)
	store := &DNSEndpoints{Expire: opts.Expire}
	u := New(Config{
		Zones: w.Zones, Keys: keys, Zone: w.Zone, Store: store, Authorizer: w.Authorizer,
		Limits: opts.Limits, Fudge: opts.Fudge, RatePerMinute: opts.RatePerMinute, OnReject: w.OnReject,
	})
	return &Service{Updater: u, opts: opts, keys: keys, store: store}
}

// Start connects the store to the cluster of cfg, starts the janitor and,
// with the secrets option, waits for the Secrets' keys to be listed; then
// it reads UPDATE messages on the listen address.
func (s *Service) Start(cfg *rest.Config) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("updates: %w", err)
	}
	s.StartClient(dyn)
	return s.Listen()
}

// Listen reads UPDATE messages on the listen address (see Listen).
func (s *Service) Listen() error {
	l, err := Listen(s.opts.Listen, s.Updater.cfg.Limits.MaxMessage, s.Updater.Handle)
	if err != nil {
		return err
	}
	s.listen = l
	return nil
}

// Addr returns the address UPDATE messages are read on, once listening.
func (s *Service) Addr() string {
	if s.listen == nil {
		return ""
	}
	return s.listen.Addr()
}

// StartClient is Start with a dynamic client of the cluster.
func (s *Service) StartClient(dyn dynamic.Interface) {
	s.store.Client = dyn
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	if namespaces, st := s.opts.secretsWatched(); len(namespaces) > 0 {
		s.watchSecrets(ctx, namespaces, st)
	}
	interval := min(max(s.opts.Expire/4, 10*time.Second), 5*time.Minute)
	namespaces := s.opts.Namespaces()
	go func() {
		defer close(s.done)
		s.store.Janitor(ctx, namespaces, interval)
	}()
	log.Infof("updates: accepting RFC 2136 updates of _acme-challenge TXT records for %s with %d key(s)", strings.Join(s.Updater.cfg.Zones, " "), s.keys.Len())
}

// watchSecrets starts the informers of the Secrets holding keys, one per
// namespace (of the secrets and tenant_secrets lines, or one for all), and
// waits a while for them.
func (s *Service) watchSecrets(ctx context.Context, namespaces []string, st SecretTenancy) {
	var wg sync.WaitGroup
	for _, ns := range namespaces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			WatchSecrets(s.store.Client, ns, st, s.keys, ctx.Done())
		}()
	}
	synced := make(chan struct{})
	go func() {
		wg.Wait()
		close(synced)
	}()
	select {
	case <-synced:
	case <-time.After(10 * time.Second):
		log.Warning("updates: the Secrets holding TSIG keys have not been listed yet; their keys come when they are")
	}
}

// Stop stops reading UPDATE messages, the janitor and the Secrets' informer.
func (s *Service) Stop() {
	if s.listen != nil {
		s.listen.Close()
		s.listen = nil
	}
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
}
