package watch

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// namedListWatch reads one cluster-scoped object by name: the Namespace of a
// listed namespace. Both calls name it in the path, GET /api/v1/namespaces/NAME
// and the watch at /api/v1/watch/namespaces/NAME, so that the API server
// authorizes them as requests in that namespace: a Role there granting get
// and watch on namespaces suffices. (A list with the field selector
// metadata.name=NAME would be a request at the cluster scope.)
//
// The list is the object alone, or an empty list when it does not exist
// (yet): the watch then reports its creation.
func namedListWatch(gc groupClient, k *source.Kind, name string) (listFunc, watchFunc) {
	list := func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
		obj := k.Object.DeepCopyObject()
		out := newList(k)
		err := gc.rest.Get().Resource(k.Resource).Name(name).Do(ctx).Into(obj)
		if apierrors.IsNotFound(err) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if m, err := meta.Accessor(obj); err == nil {
			if lm, err := meta.ListAccessor(out); err == nil {
				lm.SetResourceVersion(m.GetResourceVersion())
			}
		}
		return out, meta.SetList(out, []runtime.Object{obj})
	}
	watchFn := func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.Watch = false // implied by the path
		o.FieldSelector, o.LabelSelector = "", ""
		return gc.rest.Get().Prefix("watch").Resource(k.Resource).Name(name).VersionedParams(&o, gc.params).Watch(ctx)
	}
	return list, watchFn
}

// noWatchList tells an informer's reflector to list, then watch: the watch
// of namedListWatch does not send the initial events of a WatchList.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }
