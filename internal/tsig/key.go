package tsig

import (
	"encoding/base64"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/miekg/dns"
)

// Key is a TSIG key.
type Key struct {
	// Name is the key's name, fully qualified and lower case.
	Name string
	// Algorithm is the canonical algorithm name, e.g. "hmac-sha256.".
	Algorithm string
	// Secret is the base64 secret, as the TSIG helpers of miekg/dns take it.
	Secret string
}

// algorithms are the accepted algorithms (RFC 8945 §6: SHA-256 is
// mandatory; SHA-1 and MD5 are not accepted).
var algorithms = map[string]bool{dns.HmacSHA256: true, dns.HmacSHA384: true, dns.HmacSHA512: true}

// parseAlgorithm returns the canonical name of a TSIG algorithm: hmac-sha256,
// hmac-sha384 or hmac-sha512, with or without the trailing dot.
func parseAlgorithm(s string) (string, error) {
	a := canonical(s)
	if !algorithms[a] {
		return "", fmt.Errorf("unsupported TSIG algorithm %q (supported: hmac-sha256, hmac-sha384, hmac-sha512)", s)
	}
	return a, nil
}

// New checks and returns a key: name a domain name other than the root,
// algorithm one of parseAlgorithm's, secret a base64 secret of at least 16 bytes.
func New(name, algorithm, secret string) (Key, error) {
	n := canonical(name)
	if _, ok := dns.IsDomainName(n); !ok || n == "." {
		return Key{}, fmt.Errorf("invalid key name %q", name)
	}
	a, err := parseAlgorithm(algorithm)
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
	return Key{Name: n, Algorithm: a, Secret: secret}, nil
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

// canonical returns name fully qualified and lower-cased with DNS case
// folding: ASCII letters only (RFC 4343), never Unicode's rules.
func canonical(name string) string { return dns.Fqdn(foldASCII.Replace(name)) }

// foldASCII lowers the ASCII letters of a string, byte by byte.
var foldASCII = func() *strings.Replacer {
	var pairs []string
	for c := 'A'; c <= 'Z'; c++ {
		pairs = append(pairs, string(c), string(c+'a'-'A'))
	}
	return strings.NewReplacer(pairs...)
}()
