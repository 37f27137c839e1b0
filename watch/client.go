package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/seed-e581d630/k8s_gateway/source"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1a2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwv1a3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
)

type (
	ListFunc  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	WatchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error)
)

// API lists and watches the kinds the plugin reads. restAPI implements
// it for a real API server; the unit tests wrap client-go's fake clientset.
type API interface {
	// Reads reports whether the client can list and watch kind k.
	Reads(k *source.Kind) bool
	// ListWatch returns the list and watch calls of kind k in namespace, or
	// in every namespace when it is empty; for a byName kind, of the one
	// object named namespace (see namedListWatch).
	ListWatch(k *source.Kind, namespace string) (ListFunc, WatchFunc)
	// ServerGroups returns the API groups the server serves.
	ServerGroups(ctx context.Context) (*metav1.APIGroupList, error)
	// ServedResources returns the resources the server serves at a group
	// version, "group/version" or "v1"; none when it does not serve it.
	ServedResources(ctx context.Context, groupVersion string) ([]string, error)
}

// ApiScheme knows only the kinds the plugin reads. Using it instead of
// client-go's clientset keeps every other API group out of the binary: about
// half of its size and of the process's resident memory.
var (
	ApiScheme = runtime.NewScheme()
	apiParams = runtime.NewParameterCodec(ApiScheme)
	ApiCodecs = serializer.NewCodecFactory(ApiScheme)
)

// The built-in group versions the plugin reads.
var (
	coreV1       = schema.GroupVersion{Version: "v1"}
	networkingV1 = schema.GroupVersion{Group: "networking.k8s.io", Version: "v1"}
	discoveryV1  = schema.GroupVersion{Group: "discovery.k8s.io", Version: "v1"}
)

// The experimental XListenerSet's objects are read into the ListenerSet
// type, whose fields the plugin reads are the same; a scheme of their own
// keeps the type registered once per scheme.
var (
	xScheme = runtime.NewScheme()
	xParams = runtime.NewParameterCodec(xScheme)
	xCodecs = serializer.NewCodecFactory(xScheme)
)

func init() {
	// Of the built-in groups, only the kinds read, decoded into the types
	// the informers keep: their own for Services and Ingresses, the metadata
	// alone for the others. (Events are written as JSON, not through it.)
	for _, k := range []struct {
		kind      schema.GroupVersionKind
		obj, list runtime.Object
	}{
		{coreV1.WithKind("Service"), &source.Service{}, &source.ServiceList{}},
		{coreV1.WithKind("Namespace"), &metav1.PartialObjectMetadata{}, &metav1.PartialObjectMetadataList{}},
		{networkingV1.WithKind("Ingress"), &source.Ingress{}, &source.IngressList{}},
		{networkingV1.WithKind("IngressClass"), &metav1.PartialObjectMetadata{}, &metav1.PartialObjectMetadataList{}},
		{discoveryV1.WithKind("EndpointSlice"), &source.EndpointSlice{}, &source.EndpointSliceList{}},
	} {
		ApiScheme.AddKnownTypeWithName(k.kind, k.obj)
		ApiScheme.AddKnownTypeWithName(k.kind.GroupVersion().WithKind(k.kind.Kind+"List"), k.list)
	}
	metav1.AddToGroupVersion(ApiScheme, coreV1)
	metav1.AddToGroupVersion(ApiScheme, networkingV1)
	metav1.AddToGroupVersion(ApiScheme, discoveryV1)
	utilruntime.Must(gwv1.Install(ApiScheme))
	utilruntime.Must(gwv1a2.Install(ApiScheme))
	utilruntime.Must(gwv1a3.Install(ApiScheme))
	xScheme.AddKnownTypeWithName(source.XListenerSetVersion.WithKind("XListenerSet"), &gwv1.ListenerSet{})
	xScheme.AddKnownTypeWithName(source.XListenerSetVersion.WithKind("XListenerSetList"), &gwv1.ListenerSetList{})
	metav1.AddToGroupVersion(xScheme, source.XListenerSetVersion)
}

// RestAPI reads the API server with one REST client per group version.
type restAPI struct {
	groups   map[string]groupClient // by group version, "v1" for the core group
	Dynamic  dynamic.Interface      // DNSEndpoints, whose types the plugin does not import
	shareKey string                 // the cluster and credentials, for shared informers
}

// ShareKey implements Sharer: controllers whose configurations read the
// same cluster with the same credentials share their informers.
func (a *restAPI) ShareKey() string { return a.shareKey }

// groupClient reads one group version.
type groupClient struct {
	rest   *rest.RESTClient
	params runtime.ParameterCodec
}

// NewRestAPI returns the clients for cfg. Built-in kinds are read as
// protobuf, Gateway API kinds (CRDs) as JSON.
func NewRestAPI(cfg *rest.Config) (*restAPI, error) {
	api := &restAPI{groups: map[string]groupClient{}, shareKey: shareKeyOf(cfg)}
	for _, gv := range []struct {
		path     string
		version  runtime.Object // any object of the group version
		protobuf bool
		scheme   *runtime.Scheme
	}{
		{"/api", &source.Service{}, true, ApiScheme},
		{"/apis", &source.Ingress{}, true, ApiScheme},
		{"/apis", &source.EndpointSlice{}, true, ApiScheme},
		{"/apis", &gwv1.HTTPRoute{}, false, ApiScheme},
		{"/apis", &gwv1a2.TCPRoute{}, false, ApiScheme},
		{"/apis", &gwv1a3.TLSRoute{}, false, ApiScheme},
		{"/apis", &gwv1.ListenerSet{}, false, xScheme},
	} {
		gvks, _, err := gv.scheme.ObjectKinds(gv.version)
		if err != nil {
			return nil, err
		}
		c := rest.CopyConfig(cfg)
		c.APIPath = gv.path
		groupVersion := gvks[0].GroupVersion()
		c.GroupVersion = &groupVersion
		c.NegotiatedSerializer = ApiCodecs.WithoutConversion()
		params := apiParams
		if gv.scheme == xScheme {
			c.NegotiatedSerializer, params = xCodecs.WithoutConversion(), xParams
		}
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
		api.groups[c.GroupVersion.String()] = groupClient{rest: rc, params: params}
	}
	var err error
	if api.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return api, nil
}

func (a *restAPI) Reads(k *source.Kind) bool {
	_, ok := a.groups[k.GroupVersion]
	return ok || k.Dynamic
}

func (a *restAPI) ListWatch(k *source.Kind, namespace string) (ListFunc, WatchFunc) {
	if k.Dynamic {
		rc := a.Dynamic.Resource(source.DNSEndpointResource).Namespace(namespace)
		return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return rc.List(ctx, o) }, rc.Watch
	}
	gc := a.groups[k.GroupVersion]
	if k.ByName && namespace != "" {
		return namedListWatch(gc, k, namespace)
	}
	request := func(o *metav1.ListOptions) *rest.Request {
		r := gc.rest.Get().Namespace(namespace).Resource(k.Resource).VersionedParams(o, gc.params)
		if o.TimeoutSeconds != nil {
			r = r.Timeout(time.Duration(*o.TimeoutSeconds) * time.Second)
		}
		return r
	}
	list := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		out := newList(k)
		return out, request(&o).Do(ctx).Into(out)
	}
	watch := func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.Watch = true
		return request(&o).Watch(ctx)
	}
	return list, watch
}

func (a *restAPI) ServerGroups(ctx context.Context) (*metav1.APIGroupList, error) {
	body, err := a.groups["v1"].rest.Get().AbsPath("/apis").SetHeader("Accept", runtime.ContentTypeJSON).Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	groups := &metav1.APIGroupList{}
	if err := json.Unmarshal(body, groups); err != nil {
		return nil, fmt.Errorf("decoding /apis: %w", err)
	}
	return groups, nil
}

func (a *restAPI) ServedResources(ctx context.Context, groupVersion string) ([]string, error) {
	path := "/apis/" + groupVersion
	if !strings.Contains(groupVersion, "/") {
		path = "/api/" + groupVersion
	}
	body, err := a.groups["v1"].rest.Get().AbsPath(path).SetHeader("Accept", runtime.ContentTypeJSON).Do(ctx).Raw()
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	list := &metav1.APIResourceList{}
	if err := json.Unmarshal(body, list); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	names := make([]string, 0, len(list.APIResources))
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	return names, nil
}

// newList returns an empty list of kind k's objects.
func newList(k *source.Kind) runtime.Object {
	if k.Dynamic {
		return &unstructured.UnstructuredList{}
	}
	return k.List.DeepCopyObject()
}

// RestConfig returns the client configuration: the kubeconfig when given, else
// the in-cluster configuration, else the default kubeconfig loading rules
// (KUBECONFIG, ~/.kube/config).
func RestConfig(kubeconfig, context string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
		overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	} else if cfg, err = rest.InClusterConfig(); err != nil {
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
		if err != nil {
			err = fmt.Errorf("not running in a cluster and no kubeconfig found: %w", err)
		}
	}
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "k8s_gateway"
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}
