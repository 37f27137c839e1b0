package gateway

import (
	"context"
	"math/rand/v2"

	"github.com/coredns/coredns/plugin/metadata"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// Traffic steering (docs/features/traffic-steering.md): the weight and location of a
// cluster (options of a k8s_gateway or cluster block, beside those of the
// objects' annotations; setup_clusteroptions.go), the default location, and
// per query the client's location from the geoip plugin's metadata and the
// ECS option of the reply (ecs.go).

// The geoip plugin's metadata that locates a client.
const (
	metaContinent = "geoip/continent/code"
	metaCountry   = "geoip/country/code"
	metaRegions   = "geoip/subdivisions/code"
)

// client returns who asks: the location the geoip plugin found for the
// query (from its ECS option or its source address, as geoip is
// configured), none without it, and a random draw.
func (g *Gateway) client(ctx context.Context) index.Client {
	c := index.Client{Default: g.defaultLocation, Draw: rand.Uint32()}
	if f := metadata.ValueFunc(ctx, metaCountry); f != nil {
		c.Country = f()
		if f := metadata.ValueFunc(ctx, metaContinent); f != nil {
			c.Continent = f()
		}
		if f := metadata.ValueFunc(ctx, metaRegions); f != nil {
			c.Regions = f()
		}
	}
	return c
}
