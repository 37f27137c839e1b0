package gateway

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// nodataCases: the name exists, not with the type asked (RFC 2308 §2.2).
var nodataCases = []test.Case{
	// NODATA: the name exists, not with this type. SOA in authority.
	{Qname: "v6.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	{Qname: "v4.example.com.", Qtype: dns.TypeAAAA, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeMX, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeTXT, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeSRV, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeCAA, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeCNAME, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeHTTPS, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypePTR, Ns: testutil.RRs(soaCom)},
	{Qname: "txt.example.com.", Qtype: dns.TypeA, Ns: testutil.RRs(soaCom)},
	// SOA and NS below the apex.
	{Qname: "www.example.com.", Qtype: dns.TypeSOA, Ns: testutil.RRs(soaCom)},
	{Qname: "www.example.com.", Qtype: dns.TypeNS, Ns: testutil.RRs(soaCom)},
	{Qname: "c.example.com.", Qtype: dns.TypeNS, Ns: testutil.RRs(soaCom)},
}

// TestLookupNoData: NOERROR, no answer, the SOA in authority.
func TestLookupNoData(t *testing.T) {
	g := lookupGateway(t)
	for _, tc := range nodataCases {
		qtCheck(t, g, tc)
	}
}

// nxdomainCases: the name does not exist (RFC 2308 §2.1).
var nxdomainCases = []test.Case{
	// NXDOMAIN, every type; and below existing names (no wildcard there).
	{Qname: "missing.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeAAAA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeCNAME, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeMX, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeSRV, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeTXT, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeSOA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeNS, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "missing.example.com.", Qtype: dns.TypeANY, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "x.www.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "x.a.b.c.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	{Qname: "x.c.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
	// Below a CNAME owner: no DNAME semantics, the name does not exist.
	{Qname: "x.alias.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: testutil.RRs(soaCom)},
}

// TestLookupNXDomain: NXDOMAIN and the SOA in authority.
func TestLookupNXDomain(t *testing.T) {
	g := lookupGateway(t)
	for _, tc := range nxdomainCases {
		qtCheck(t, g, tc)
	}
}
