package watch

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// A kind listed with several label selectors (Config.LabelSelectors, the
// serviceLabelSelectors option) publishes every object that matches any of
// them, as the original k8s_gateway plugin did: one informer per selector,
// each filtered by the API server, numbered by watched.alt. An object that
// two selectors match is in two informers under one index key, so that it
// is one claim: each informer's add or change publishes it, and the deletion
// from one (the object gone, or its labels no longer matching that
// selector) withdraws it only when no other informer holds it, else
// publishes it from there. The events of such a kind are serialized
// (publisher.lock): every store changes before its handler runs, so the
// last publish is of the newest copy.

// publishFromOtherSelector publishes meta, deleted from w, from another
// informer of its kind and namespace that still holds it, and reports
// whether there was one.
func (p *publisher) publishFromOtherSelector(w *watched, meta metav1.Object) bool {
	if len(p.cfg.LabelSelectors[w.Kind.Name]) < 2 {
		return false
	}
	key := cache.MetaObjectToName(meta).String()
	for _, o := range p.stores.alternatives(w) {
		if o == w {
			continue
		}
		if obj, ok, _ := o.informer.GetStore().GetByKey(key); ok {
			p.publish(o, obj.(metav1.Object), obj)
			return true
		}
	}
	return false
}
