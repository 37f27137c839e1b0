package fleet

import (
	"context"
	"encoding/base64"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/seed-e581d630/k8s_gateway/internal/informer"
	"github.com/seed-e581d630/k8s_gateway/watch"
)

// secretValue returns the kubeconfig of a Cluster API kubeconfig Secret, or
// what is wrong with it.
func secretValue(u *unstructured.Unstructured) ([]byte, string) {
	s, ok, _ := unstructured.NestedString(u.Object, "data", "value")
	if !ok || s == "" {
		return nil, "no key value"
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, "key value is not base64: " + err.Error()
	}
	return b, ""
}

// KubeconfigBytesAPI returns the API client of a kubeconfig's current
// context, with limits (the defaults where limits sets none).
func KubeconfigBytesAPI(kubeconfig []byte, limits watch.ClientLimits) (watch.API, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "k8s_gateway"
	watch.DefaultClientLimits.Apply(cfg)
	limits.Apply(cfg)
	return watch.NewRestAPI(cfg)
}

// stores are the stores of one kind's informers, one per namespace.
type stores []cache.Store

// get returns the object with the key "namespace/name".
func (s stores) get(key string) (*unstructured.Unstructured, bool) {
	for _, st := range s {
		if o, ok, _ := st.GetByKey(key); ok {
			u, ok := o.(*unstructured.Unstructured)
			return u, ok
		}
	}
	return nil, false
}

// dynamicInformer is an informer of resource in namespace ns (all when
// empty) with the label selector, through the dynamic client and the
// plugin's informer recipe (internal/informer): it recovers within about a
// second of the API server's return, as the kinds' informers do. It stands
// in for client-go's dynamicinformer, whose package links every typed
// informer and client of client-go into the binary.
func dynamicInformer(dyn dynamic.Interface, kind string, resource schema.GroupVersionResource, ns, selector string, timing watch.GuardTiming) cache.SharedIndexInformer {
	if timing == (watch.GuardTiming{}) {
		timing = watch.DefaultGuardTiming
	}
	client := dyn.Resource(resource).Namespace(ns)
	what := kind + "s"
	if ns != "" {
		what += " in namespace " + ns
	}
	inf, _ := informer.New(informer.Config{
		Kind: kind, What: what, Object: &unstructured.Unstructured{}, Timing: timing,
		List:    func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return client.List(ctx, o) },
		Watch:   client.Watch,
		Options: func(o *metav1.ListOptions) { o.LabelSelector = selector },
		// The dynamic client says whether it supports streaming lists
		// (WatchList); its fake does not.
		Client: dyn,
	})
	return inf
}
