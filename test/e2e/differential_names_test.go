//go:build e2e

package e2e

import (
	"strings"

	"github.com/miekg/dns"
)

// The query names of the randomized campaign (differential_random_test.go).

// label is a random label: mostly short letters and digits, at times a
// hyphen, an underscore, an asterisk inside, or an escaped odd octet.
func (g *diffGen) label(maxLen int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	n := 1 + g.r.IntN(min(maxLen, 8))
	if g.chance(0.05) {
		n = 1 + g.r.IntN(maxLen)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	s := string(b)
	switch g.r.IntN(40) {
	case 0:
		s = "x-" + s[:max(0, len(s)-2)]
	case 1:
		s = "_" + s[:len(s)-1]
	case 2:
		s = "a*" + s[:max(0, len(s)-2)]
	case 3:
		odd := []string{`\000`, `\.`, `\032`, `\255`, `\(`, `\"`, `\\`, `\195`, `\127`}
		s = odd[g.r.IntN(len(odd))] + s[:len(s)-1]
	}
	return s
}

// name draws a query name.
func (g *diffGen) name() string {
	var name string
	switch k := g.r.IntN(100); {
	case k < 25:
		name = g.pick(g.owners)
	case k < 35:
		name = g.label(63) + "." + g.pick(g.owners)
	case k < 45:
		name = g.pick(g.ents)
	case k < 55 && len(g.wildcards) > 0:
		name = g.labels(1+g.r.IntN(3)) + g.pick(g.wildcards)
		if g.chance(0.1) {
			name = g.label(8) + ".*." + g.pick(g.wildcards) // below the wildcard's own name
		}
	case k < 65 && len(g.cuts) > 0:
		name = g.labels(g.r.IntN(3)) + g.pick(g.cuts)
	case k < 73:
		name = g.pick(g.targets)
	case k < 80:
		name = g.outside()
	case k < 88:
		name = g.long()
	default:
		name = g.labels(1+g.r.IntN(3)) + g.zone
	}
	if g.chance(0.25) {
		name = g.shuffleCase(name)
	}
	return name
}

// labels is n random labels, each followed by a dot.
func (g *diffGen) labels(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(g.label(20) + ".")
	}
	return b.String()
}

// outside is a name out of the zone: above it, beside it, or far away.
func (g *diffGen) outside() string {
	names := []string{".", "test.", "example.net.", "xdifferential.test.", "differential.test.example.",
		"ifferential.test.", "in-addr.arpa.", "version.bind.", "lb-1234.elb.example.net.", "a.test."}
	if g.chance(0.5) {
		return g.labels(1+g.r.IntN(2)) + g.pick(names[1:])
	}
	return g.pick(names)
}

// long is a name of many labels, at most 255 octets: below a name of the
// zone (up to 120 labels), or out of it (up to 127).
func (g *diffGen) long() string {
	suffix := "."
	if g.chance(0.75) {
		suffix = g.pick(append(g.owners, g.ents...))
	}
	budget := 255 - wireLen(suffix)
	var b strings.Builder
	for budget >= 2 {
		l := strings.Repeat("a", 1+g.r.IntN(min(budget-1, 63)))
		if g.chance(0.7) {
			l = l[:1] // many short labels: toward 127
		}
		if g.chance(0.2) {
			l = g.label(min(budget-1, 63))
		}
		if wireLen(l+"."+suffix)+b.Len() > 255 {
			break
		}
		b.WriteString(l + ".")
		budget -= wireLen(l+".") - 1
		if g.chance(0.02) {
			break
		}
	}
	name := b.String() + suffix
	if suffix == "." {
		name = b.String()
	}
	for wireLen(name) > 255 {
		_, name, _ = strings.Cut(name, ".")
	}
	if name == "" {
		return "."
	}
	return name
}

// wireLen is the length of name in wire format (escapes counted once).
func wireLen(name string) int {
	buf := make([]byte, 512)
	n, err := dns.PackDomainName(dns.Fqdn(name), buf, 0, nil, false)
	if err != nil {
		return 1000
	}
	return n
}

// shuffleCase flips the case of some letters (not inside escapes).
func (g *diffGen) shuffleCase(name string) string {
	b := []byte(name)
	for i := range b {
		if i > 0 && b[i-1] == '\\' {
			continue
		}
		if c := b[i]; c >= 'a' && c <= 'z' && g.chance(0.5) {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
