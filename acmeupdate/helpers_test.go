package acmeupdate

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

const (
	testZone    = "example.com."
	secretA     = "c2VjcmV0LW9mLXRlYW0tYS0zMi1ieXRlcy1sb25nISE="
	secretB     = "c2VjcmV0LW9mLXRlYW0tYi0zMi1ieXRlcy1sb25nISE="
	keyA, keyB  = "team-a.", "team-b."
	challengeA  = "_acme-challenge.team-a.example.com."
	acmeValue   = "LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0"
	acmeValue2  = "9ihDbjxnXgkvKX2exTmU3vL7YKjZF_2EubGdKj1SyuM"
	testTimeout = 5 * time.Second
)

// memStore is a Store in memory, by namespace and name.
type memStore struct {
	mu   sync.Mutex
	objs map[string][]string
	ttl  map[string]uint32
	fail error
}

func newMemStore() *memStore { return &memStore{objs: map[string][]string{}, ttl: map[string]uint32{}} }

func (s *memStore) Edit(_ context.Context, ns, name, _ string, edit EditFunc) (Change, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return Change{}, s.fail
	}
	k := ns + "/" + name
	before := s.objs[k]
	v, ttl, err := edit(before, s.ttl[k])
	if err != nil {
		return Change{}, err
	}
	if len(v) == 0 {
		delete(s.objs, k)
	} else {
		s.objs[k], s.ttl[k] = v, ttl
	}
	return changeOf(before, v, ttl), nil
}

func (s *memStore) values(ns, name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.objs[ns+"/"+name])
}

// memZone is a Zone of fixed records.
type memZone []dns.RR

func (z memZone) Records(name string, t uint16) []dns.RR {
	var out []dns.RR
	for _, rr := range z {
		if dns.CanonicalName(rr.Header().Name) == name && (t == dns.TypeANY || rr.Header().Rrtype == t) {
			out = append(out, rr)
		}
	}
	return out
}

func mustRR(t testing.TB, s string) dns.RR {
	t.Helper()
	rr, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

// testUpdater returns an Updater for testZone with the keys of team-a and
// team-b, under a first-like policy: team-b owns b.example.com.
func testUpdater(t testing.TB, zone memZone) (*Updater, *memStore, *[]Rejection) {
	t.Helper()
	ka, err := NewKey(keyA, "hmac-sha256", secretA, "team-a", "Corefile")
	if err != nil {
		t.Fatal(err)
	}
	kb, err := NewKey(keyB, "hmac-sha512", secretB, "team-b", "Corefile")
	if err != nil {
		t.Fatal(err)
	}
	store := newMemStore()
	var rejected []Rejection
	u := New(Config{
		Zones: []string{testZone}, Keys: NewKeyring([]Key{ka, kb}), Zone: zone, Store: store,
		Authorizer: AuthorizerFunc(func(ns, zone, name string) (bool, string) {
			if dns.IsSubDomain("team-a.example.com.", name) {
				return ns == "team-a", "owned by team-a"
			}
			return true, ""
		}),
		RatePerMinute: 1000,
		OnReject:      func(r Rejection) { rejected = append(rejected, r) },
	})
	return u, store, &rejected
}

// signed packs m signed with key (name, algorithm, secret) at time ts, and
// returns the wire and the request MAC.
func signed(t testing.TB, m *dns.Msg, name, alg, secret string, ts time.Time) ([]byte, string) {
	t.Helper()
	m.SetTsig(name, alg, 300, ts.Unix())
	buf, mac, err := dns.TsigGenerate(m, secret, "", false)
	if err != nil {
		t.Fatal(err)
	}
	return buf, mac
}

// serve sends wire to u as the listener does and returns the reply.
func serve(t testing.TB, u *Updater, wire []byte) (*dns.Msg, []byte) {
	t.Helper()
	buf, _ := u.Handle(context.Background(), slices.Clone(wire))
	if buf == nil {
		t.Fatal("no reply written")
	}
	reply := new(dns.Msg)
	if err := reply.Unpack(buf); err != nil {
		t.Fatal(err)
	}
	return reply, buf
}

func updateMsg(zone string) *dns.Msg {
	m := new(dns.Msg)
	m.SetUpdate(zone)
	m.Id = 4242
	return m
}
