package acmeupdate

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/miekg/dns"
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

// algorithms are the accepted TSIG algorithms (RFC 8945 §6: SHA-256 is
// mandatory; SHA-1 and MD5 are not accepted).
var algorithms = map[string]bool{dns.HmacSHA256: true, dns.HmacSHA384: true, dns.HmacSHA512: true}

// ParseAlgorithm returns the canonical name of a TSIG algorithm: hmac-sha256,
// hmac-sha384 or hmac-sha512, with or without the trailing dot.
func ParseAlgorithm(s string) (string, error) {
	a := canonical(s)
	if !algorithms[a] {
		return "", fmt.Errorf("unsupported TSIG algorithm %q (supported: hmac-sha256, hmac-sha384, hmac-sha512)", s)
	}
	return a, nil
}

// NewKey checks and returns a key.
func NewKey(name, algorithm, secret, namespace, source string) (Key, error) {
	n := canonical(name)
	if _, ok := dns.IsDomainName(n); !ok || n == "." {
		return Key{}, fmt.Errorf("invalid key name %q", name)
	}
	a, err := ParseAlgorithm(algorithm)
	if err != nil {
		return Key{}, err
	}
	secret = strings.TrimSpace(secret)
	raw, err := base64.StdEncoding.DecodeString(secret)
	if err != nil {
		return Key{}, fmt.Errorf("key %s: the secret is not base64: %v", n, err)
	}
	if len(raw) < 16 {
		return Key{}, fmt.Errorf("key %s: the secret has %d bytes; at least 16 are needed", n, len(raw))
	}
	if namespace == "" {
		return Key{}, errors.New("key " + n + ": no namespace")
	}
	return Key{Name: n, Algorithm: a, Secret: secret, Namespace: namespace, Source: source}, nil
}

// bindSecret finds the secret of a BIND key file (tsig-keygen's output).
var bindSecret = regexp.MustCompile(`secret\s+"([^"]+)"`)

// ReadSecretFile reads a key's secret from a file: either the base64 secret
// alone, or a BIND key file ("key NAME { algorithm A; secret "S"; };") as
// tsig-keygen writes it.
func ReadSecretFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if m := bindSecret.FindSubmatch(b); m != nil {
		return string(m[1]), nil
	}
	s := strings.TrimSpace(string(b))
	if s == "" || strings.ContainsAny(s, " \t\n{};") {
		return "", fmt.Errorf("%s: neither a base64 secret nor a BIND key file", path)
	}
	return s, nil
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
