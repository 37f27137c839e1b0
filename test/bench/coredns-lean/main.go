// Command coredns-lean is stock CoreDNS, from the same module version as
// cmd/coredns, with only the plugins the benchmark compares against: file
// (an authoritative zone from a zone file) and whoami (the cost of the
// CoreDNS framework itself, with no lookup at all).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/file"
	_ "github.com/coredns/coredns/plugin/whoami"
)

func init() {
	dnsserver.Directives = []string{"bind", "whoami", "file"}
}

func main() { coremain.Run() }
