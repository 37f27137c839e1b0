package source

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// AddressFilter is a block's include and exclude options: which published
// addresses the block keeps. It applies to the records every source makes,
// before they reach the index, so that answers, zone transfers, PTR records
// and the persisted copies agree. Hostname targets (CNAMEs) pass unchanged.
type AddressFilter struct {
	Include []netip.Prefix // when not empty, only addresses inside one of these
	Exclude []netip.Prefix // never addresses inside one of these
}

// keeps reports whether the filter lets ip through: inside an include range
// (or no include ranges at all) and inside no exclude range.
func (f *AddressFilter) keeps(ip netip.Addr) bool {
	if f == nil {
		return true
	}
	ip = ip.Unmap()
	in := func(p netip.Prefix) bool { return p.Contains(ip) }
	if len(f.Include) > 0 && !slices.ContainsFunc(f.Include, in) {
		return false
	}
	return !slices.ContainsFunc(f.Exclude, in)
}

// targets returns t without the addresses the filter drops; its hostnames stay.
func (f *AddressFilter) targets(t targets) targets {
	if f == nil || len(f.Include) == 0 && len(f.Exclude) == 0 {
		return t
	}
	kept := targets{hosts: t.hosts}
	for _, ip := range t.ips {
		if f.keeps(ip) {
			kept.ips = append(kept.ips, ip)
		}
	}
	return kept
}

// keepsRecord reports whether the filter lets rr through: any record but an
// A or AAAA record whose address it drops.
func (f *AddressFilter) keepsRecord(rr dns.RR) bool {
	var ip netip.Addr
	switch rr := rr.(type) {
	case *dns.A:
		ip, _ = netip.AddrFromSlice(rr.A)
	case *dns.AAAA:
		ip, _ = netip.AddrFromSlice(rr.AAAA)
	default:
		return true
	}
	return f.keeps(ip)
}

// AddRanges parses the arguments of an include or exclude option (opt): CIDR
// ranges, or single addresses.
func (f *AddressFilter) AddRanges(opt string, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("wrong number of arguments (%d) for %s CIDR...", len(args), opt)
	}
	for _, a := range args {
		p, err := parseRange(a)
		if err != nil {
			return fmt.Errorf("%s: invalid address range %q: %v", opt, a, err)
		}
		list := &f.Exclude
		if opt == "include" {
			list = &f.Include
		}
		if !slices.Contains(*list, p) {
			*list = append(*list, p)
		}
	}
	return nil
}

// parseRange parses a CIDR range, or one address as a range of one.
// Host bits set in a range (192.0.2.1/24) are an error: such a range is
// usually a typo.
func parseRange(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		ip, err := netip.ParseAddr(s)
		if err != nil || ip.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("not an address or CIDR range")
		}
		ip = ip.Unmap()
		return netip.PrefixFrom(ip, ip.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("host bits set, did you mean %s?", p.Masked())
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("IPv4-mapped range, write it as IPv4")
	}
	return p, nil
}
