package gateway

import (
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// quota returns the index's quota per tenant (index.Config.Quota): the
// tenant_quota option, or by default source.MaxObjectRecords under the
// policies that keep tenants apart (first, delegated), so that no
// namespace takes every replica's memory with it; none under union, where
// every namespace may publish any name anyway.
func (g *Gateway) quota() func(string) int {
	n := g.tenantQuota
	if n < 0 {
		n = 0
		if g.ownership != index.Union {
			n = source.MaxObjectRecords
		}
	}
	if n == 0 {
		return nil
	}
	return func(string) int { return n }
}
