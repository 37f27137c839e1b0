package catalog

import (
	"fmt"

	"github.com/miekg/dns"
)

// maxOwner is the longest owner a catalog holds below its name: a member's
// group property, group.<ID>.zones.<catalog>.
var maxOwner = len("group.") + 2*16 + len(".zones.")

// Check reports what would make the catalog of cfg unservable: a catalog
// name that is no domain name, the root, or so long that a member's
// property would have an owner of more than 255 octets (RFC 1035 §2.3.4);
// a member that is no domain name; a group longer than a TXT string (255
// octets, RFC 1035 §3.3.14); a coo that is no domain name or the catalog
// itself.
func (cfg Config) Check() error {
	name := dns.CanonicalName(cfg.Name)
	if !isName(name) || name == "." {
		return fmt.Errorf("invalid zone %q", cfg.Name)
	}
	if len(name)+maxOwner > 254 {
		return fmt.Errorf("zone %s is too long: its members' properties would have names longer than 255 octets", name)
	}
	for _, m := range cfg.Members {
		if err := m.check(name); err != nil {
			return err
		}
	}
	return nil
}

// check reports what is wrong with m as a member of the catalog name.
func (m Member) check(name string) error {
	if z := dns.CanonicalName(m.Zone); !isName(z) {
		return fmt.Errorf("invalid member zone %q", m.Zone)
	}
	if len(m.Group) > 255 {
		return fmt.Errorf("group %q is longer than 255 octets", m.Group)
	}
	if m.COO != "" {
		if coo := dns.CanonicalName(m.COO); !isName(coo) || coo == name {
			return fmt.Errorf("invalid coo catalog %q", m.COO)
		}
	}
	return nil
}

// isName reports whether name is a fully qualified domain name that packs
// (255 octets at most): not one whose last dot is escaped.
func isName(name string) bool {
	_, ok := dns.IsDomainName(name)
	return ok && dns.IsFqdn(name) && len(name) <= 254
}

// lowerASCII lower-cases the ASCII letters of name, as DNS compares names
// (RFC 4343), leaving every other octet as it is.
func lowerASCII(name string) string {
	b := []byte(name)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
