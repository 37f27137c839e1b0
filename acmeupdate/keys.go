package acmeupdate

import (
	"errors"
	"fmt"
	"sync"

	"github.com/seed-e581d630/k8s_gateway/internal/tsig"
)

// Key is a TSIG key bound to the namespace whose names it may update.
type Key struct {
	// Name is the key's name, fully qualified and lower case.
	Name string
	// Algorithm is the canonical algorithm name, e.g. "hmac-sha256.".
	Algorithm string
	// Secret is the base64 secret, as TSIG helpers of the dns package take it.
	Secret string
	// Namespace is the tenant the key acts for.
	Namespace string
	// Source says where the key comes from: "Corefile" or "Secret/<ns>/<name>".
	Source string
}

// NewKey checks and returns a key (tsig.New), bound to namespace.
func NewKey(name, algorithm, secret, namespace, source string) (Key, error) {
	k, err := tsig.New(name, algorithm, secret)
	if err != nil {
		return Key{}, err
	}
	if namespace == "" {
		return Key{}, errors.New("key " + k.Name + ": no namespace")
	}
	return Key{Name: k.Name, Algorithm: k.Algorithm, Secret: k.Secret, Namespace: namespace, Source: source}, nil
}

// Keyring holds the keys: those of the Corefile, which never change, and
// those of Secrets, replaced as the informer reports them. A Secret's key
// never shadows a Corefile key of the same name.
type Keyring struct {
	static map[string]Key
	mu     sync.RWMutex
	byName map[string]Key    // the Secrets' keys by key name
	bySrc  map[string]string // Secret "<ns>/<name>" → its key name
}

// NewKeyring returns a keyring with the Corefile's keys.
func NewKeyring(static []Key) *Keyring {
	kr := &Keyring{static: map[string]Key{}, byName: map[string]Key{}, bySrc: map[string]string{}}
	for _, k := range static {
		kr.static[k.Name] = k
	}
	return kr
}

// Get returns the key called name (canonical).
func (kr *Keyring) Get(name string) (Key, bool) {
	if k, ok := kr.static[name]; ok {
		return k, true
	}
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	k, ok := kr.byName[name]
	return k, ok
}

// Set adds or replaces the key of a Secret; it returns an error (and keeps
// no key for the Secret) when the name is a Corefile key's or another
// Secret's.
func (kr *Keyring) Set(src string, k Key) error {
	kr.mu.Lock()
	defer kr.mu.Unlock()
	kr.removeLocked(src)
	if _, ok := kr.static[k.Name]; ok {
		return fmt.Errorf("key %s is a Corefile key: %s ignored", k.Name, src)
	}
	if other, ok := kr.byName[k.Name]; ok {
		return fmt.Errorf("key %s is already %s's: %s ignored", k.Name, other.Source, src)
	}
	kr.byName[k.Name] = k
	kr.bySrc[src] = k.Name
	return nil
}

// Remove forgets the key of a Secret.
func (kr *Keyring) Remove(src string) {
	kr.mu.Lock()
	defer kr.mu.Unlock()
	kr.removeLocked(src)
}

func (kr *Keyring) removeLocked(src string) {
	if name, ok := kr.bySrc[src]; ok {
		delete(kr.byName, name)
		delete(kr.bySrc, src)
	}
}

// Len returns the number of keys.
func (kr *Keyring) Len() int {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	return len(kr.static) + len(kr.byName)
}
