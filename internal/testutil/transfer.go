package testutil

import (
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/transfer"
)

// TransferPlugin returns CoreDNS's transfer plugin set up from block (a
// Corefile directive with its zones as arguments) in front of next.
func TransferPlugin(t *testing.T, block string, next plugin.Handler) *transfer.Transfer {
	t.Helper()
	setup, err := caddy.DirectiveAction("dns", "transfer")
	if err != nil {
		t.Fatal(err)
	}
	c := caddy.NewTestController("dns", block)
	if err := setup(c); err != nil {
		t.Fatalf("transfer setup: %v", err)
	}
	cfg := dnsserver.GetConfig(c)
	return cfg.Plugin[len(cfg.Plugin)-1](next).(*transfer.Transfer)
}
