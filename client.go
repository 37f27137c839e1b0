package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

type (
	listFunc  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error)
)

// apiClient lists and watches the kinds the plugin reads. restAPI implements
// it for a real API server; the unit tests wrap client-go's fake clientset.
type apiClient interface {
	// reads reports whether the client can list and watch kind k.
	reads(k *kind) bool
	// listWatch returns the list and watch calls of kind k in namespace, or
	// in every namespace when it is empty.
	listWatch(k *kind, namespace string) (listFunc, watchFunc)
	// serverGroups returns the API groups the server serves.
	serverGroups(ctx context.Context) (*metav1.APIGroupList, error)
}

// apiScheme knows only the kinds the plugin reads. Using it instead of
// client-go's clientset keeps every other API group out of the binary: about
// half of its size and of the process's resident memory.
var (
	apiScheme = runtime.NewScheme()
	apiParams = runtime.NewParameterCodec(apiScheme)
	apiCodecs = serializer.NewCodecFactory(apiScheme)
)

func init() {
	utilruntime.Must(corev1.AddToScheme(apiScheme))
	utilruntime.Must(networkingv1.AddToScheme(apiScheme))
	utilruntime.Must(gwv1.Install(apiScheme))
}

// restAPI reads the API server with one REST client per group version.
type restAPI struct {
	groups  map[string]*rest.RESTClient // by group version, "v1" for the core group
	dynamic dynamic.Interface           // DNSEndpoints, whose types the plugin does not import
}

// newRestAPI returns the clients for cfg. Built-in kinds are read as
// protobuf, Gateway API kinds (CRDs) as JSON.
func newRestAPI(cfg *rest.Config) (*restAPI, error) {
	api := &restAPI{groups: map[string]*rest.RESTClient{}}
	for _, gv := range []struct {
		path     string
		version  runtime.Object // any object of the group version
		protobuf bool
	}{
		{"/api", &corev1.Service{}, true},
		{"/apis", &networkingv1.Ingress{}, true},
		{"/apis", &gwv1.HTTPRoute{}, false},
	} {
		gvks, _, err := apiScheme.ObjectKinds(gv.version)
		if err != nil {
			return nil, err
		}
		c := rest.CopyConfig(cfg)
		c.APIPath = gv.path
		groupVersion := gvks[0].GroupVersion()
		c.GroupVersion = &groupVersion
		c.NegotiatedSerializer = apiCodecs.WithoutConversion()
		if gv.protobuf {
			c.ContentType = runtime.ContentTypeProtobuf
			c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
		} else {
			c.ContentType = runtime.ContentTypeJSON
		}
		rc, err := rest.RESTClientFor(c)
		if err != nil {
			return nil, err
		}
		api.groups[c.GroupVersion.String()] = rc
	}
	var err error
	if api.dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return api, nil
}

func (a *restAPI) reads(k *kind) bool {
	_, ok := a.groups[k.groupVersion]
	return ok || k.dynamic
}

func (a *restAPI) listWatch(k *kind, namespace string) (listFunc, watchFunc) {
	if k.dynamic {
		rc := a.dynamic.Resource(dnsEndpointResource).Namespace(namespace)
		return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return rc.List(ctx, o) }, rc.Watch
	}
	rc := a.groups[k.groupVersion]
	request := func(o *metav1.ListOptions) *rest.Request {
		r := rc.Get().Namespace(namespace).Resource(k.resource).VersionedParams(o, apiParams)
		if o.TimeoutSeconds != nil {
			r = r.Timeout(time.Duration(*o.TimeoutSeconds) * time.Second)
		}
		return r
	}
	list := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		out := k.newList()
		return out, request(&o).Do(ctx).Into(out)
	}
	watch := func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.Watch = true
		return request(&o).Watch(ctx)
	}
	return list, watch
}

func (a *restAPI) serverGroups(ctx context.Context) (*metav1.APIGroupList, error) {
	body, err := a.groups["v1"].Get().AbsPath("/apis").SetHeader("Accept", runtime.ContentTypeJSON).Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	groups := &metav1.APIGroupList{}
	if err := json.Unmarshal(body, groups); err != nil {
		return nil, fmt.Errorf("decoding /apis: %w", err)
	}
	return groups, nil
}

// newList returns an empty list of kind k's objects.
func (k *kind) newList() runtime.Object {
	if k.dynamic {
		return &unstructured.UnstructuredList{}
	}
	return k.list.DeepCopyObject()
}
