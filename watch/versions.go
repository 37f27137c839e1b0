package watch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// errNotServed says that the API server serves a kind at none of its versions.
var errNotServed = errors.New("not served")

// newestServed returns the newest version of k (k itself or one of k.older)
// whose resource the API server serves, by served: group version →
// resources, nil for a group version that is not served. It returns nil when
// none is served.
func newestServed(k *source.Kind, served map[string][]string) *source.Kind {
	for _, v := range k.Versions() {
		if slices.Contains(served[v.GroupVersion], v.Resource) {
			return v
		}
	}
	return nil
}

// servedVersion asks the API server's discovery which versions of k it
// serves and returns the newest, or nil when it serves none.
func (p *prober) servedVersion(k *source.Kind) (*source.Kind, error) {
	served, err := p.discover([]*source.Kind{k})
	if err != nil {
		return nil, err
	}
	return newestServed(k, served), nil
}

// discover asks the API server's discovery for the resources of every group
// version the kinds can be read at, each group version once.
func (p *prober) discover(ks []*source.Kind) (map[string][]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	served := map[string][]string{}
	for _, k := range ks {
		for _, v := range k.Versions() {
			if _, ok := served[v.GroupVersion]; ok {
				continue
			}
			resources, err := p.api.ServedResources(ctx, v.GroupVersion)
			if err != nil {
				return nil, fmt.Errorf("discovery of %s: %w", v.GroupVersion, err)
			}
			served[v.GroupVersion] = resources
		}
	}
	return served, nil
}

// notServedError explains which versions of k were looked for.
func notServedError(k *source.Kind) error {
	var gvs []string
	for _, v := range k.Versions() {
		gvs = append(gvs, v.Resource+"."+v.GroupVersion)
	}
	return fmt.Errorf("%w: the API server serves none of %s (install the Gateway API CRDs)", errNotServed, strings.Join(gvs, ", "))
}
