package source

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// The names that objects ask for, in hostnames, annotations and targets,
// become fully qualified, lower-case names inside the zones, or a warning.

// zoneNames turns a hostname into the fully qualified names it stands for.
// An absolute name (trailing dot, or inside a zone) must be inside a zone, a
// reverse zone included; with relative allowed, any other name is taken
// relative to every forward zone.
func zoneNames(r *Result, host string, zones []string, relative bool, origin string) []string {
	absolute := strings.HasSuffix(strings.TrimSpace(host), ".")
	name, err := CanonicalName(host, true)
	if err != nil {
		r.warnf("invalid hostname %q in %s: %v", host, origin, err)
		return nil
	}
	if index.ZoneOf(zones, name) >= 0 {
		return []string{name}
	}
	if absolute || !relative {
		r.warnf("hostname %q in %s is outside the zones %s", host, origin, strings.Join(zones, " "))
		return nil
	}
	names := make([]string, 0, len(zones))
	for _, z := range zones {
		if IsReverseZone(z) {
			continue // a relative name means a forward name
		}
		fq := name + z
		if _, ok := dns.IsDomainName(fq); !ok || len(fq) > 254 {
			r.warnf("hostname %q in %s is too long under %s", host, origin, z)
			continue
		}
		names = append(names, fq)
	}
	return names
}

// CanonicalName validates a hostname (RFC 1123 labels; underscores are allowed
// for service labels such as _http._tcp) and returns it lower-cased and fully
// qualified. With wildcard, the first label may be "*".
func CanonicalName(host string, wildcard bool) (string, error) {
	host = strings.ToLower(strings.TrimSpace(host))
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return "", fmt.Errorf("empty name")
	}
	if len(host) > 253 {
		return "", fmt.Errorf("name longer than 253 characters")
	}
	labels := strings.Split(host, ".")
	reverse := strings.HasSuffix(host, ".in-addr.arpa") || strings.HasSuffix(host, ".ip6.arpa")
	for i, l := range labels {
		if l == "*" && i == 0 && wildcard && len(labels) > 1 {
			continue
		}
		if reverse {
			// RFC 2317 names classless reverse delegations "0/25": a slash
			// between digits is allowed there, as a hyphen is.
			l = strings.ReplaceAll(l, "/", "-")
		}
		if err := checkLabel(l); err != nil {
			return "", err
		}
	}
	return host + ".", nil
}

// targetName validates a hostname that records point at (a CNAME, NS or PTR
// target) like canonicalName, and rejects what only looks like an IP address:
// a top-level label is never all digits (RFC 1123 §2.1, RFC 3696 §2), so
// 999.1.1.1 or 10.0.0 is a mistyped address, not a hostname.
func targetName(host string) (string, error) {
	name, err := CanonicalName(host, false)
	if err != nil {
		return "", err
	}
	labels := strings.Split(strings.TrimSuffix(name, "."), ".")
	if tld := labels[len(labels)-1]; strings.Trim(tld, "0123456789") == "" {
		return "", fmt.Errorf("not an IP address, and not a hostname: its last label %q is all digits", tld)
	}
	return name, nil
}

func checkLabel(l string) error {
	switch {
	case l == "":
		return fmt.Errorf("empty label")
	case len(l) > 63:
		return fmt.Errorf("label %q longer than 63 characters", l)
	case l[0] == '-' || l[len(l)-1] == '-':
		return fmt.Errorf("label %q starts or ends with a hyphen", l)
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("label %q has the character %q", l, c)
		}
	}
	return nil
}

// uniqueNames returns names without duplicates, in their first order.
func uniqueNames(names []string) []string {
	out := names[:0]
	seen := make(map[string]struct{}, len(names))
	for _, n := range names {
		if _, ok := seen[n]; !ok {
			seen[n] = struct{}{}
			out = append(out, n)
		}
	}
	return out
}
