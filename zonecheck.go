package gateway

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// checkZones reports a configuration whose zones cannot be served: the root
// zone, a relative nameserver name in a block with only reverse zones, and a
// zone whose SOA or NS records cannot be encoded (names too long). option is
// the option at fault, or "" when it is the zones of the directive.
func (g *Gateway) checkZones() (option string, err error) {
	for _, z := range g.Zones {
		if z == "." {
			return "", fmt.Errorf("the root zone cannot be served: k8s_gateway answers for zones delegated to it, and would deny every name it does not publish")
		}
	}
	if len(source.ForwardZones(g.Zones)) == 0 {
		for _, opt := range []struct{ option, name string }{{"apex", g.apex}, {"secondary", g.secondary}} {
			if opt.name != "" && !strings.HasSuffix(opt.name, ".") {
				return opt.option, fmt.Errorf("%s %q is relative, but the zones %s are all reverse zones, which have no names with addresses: give a forward zone too, or an absolute %s name (ending in a dot)",
					opt.option, opt.name, strings.Join(g.Zones, " "), opt.option)
			}
		}
	}
	for _, z := range g.Zones {
		names := []struct{ option, name string }{{"", "hostmaster." + z}, {"apex", g.nameserverName(g.apex, z)}}
		if g.secondary != "" {
			names = append(names, struct{ option, name string }{"secondary", g.nameserverName(g.secondary, z)})
		}
		for _, n := range names {
			if !encodable(n.name) {
				return n.option, fmt.Errorf("zone %s cannot be served: the name %s of its SOA or NS records cannot be encoded (longer than 255 octets)", z, n.name)
			}
		}
		m := new(dns.Msg)
		m.Answer = append([]dns.RR{g.newSOA(z, 0)}, g.nsRecords(z)...)
		if _, err := m.Pack(); err != nil {
			return "", fmt.Errorf("zone %s cannot be served: its SOA and NS records cannot be encoded: %v", z, err)
		}
	}
	return "", nil
}

// encodable reports whether a fully qualified name fits the wire format:
// 255 octets at most (RFC 1035 §2.3.4), one more than its presentation form.
func encodable(name string) bool {
	_, ok := dns.IsDomainName(name)
	return ok && len(dns.Fqdn(name)) <= 254
}
