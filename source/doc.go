// Package source turns Kubernetes objects into DNS records. Its functions
// are pure: an object (as an informer keeps it) and a Config in, a Result
// (records and warnings) out. Nothing here talks to an API server.
//
// It holds, one file per kind, the slim types each kind is kept as and their
// protobuf and JSON decoders (service.go, ingress.go, dnsendpoint.go,
// gatewayapi.go, route.go, listenerset.go, namespace.go, ingressclass.go);
// the hostnames, targets and annotations every kind shares (records.go,
// hostname.go, object.go); the Gateway API graph as data (parentRefs,
// listeners, ListenerSets, allowedRoutes); reverse names (reverse.go); and
// for the health option, the slim EndpointSlice (endpointslice.go), the
// backend Services of Ingresses and routes (backends.go) and what makes an
// object unhealthy (health.go).
//
// The Kinds table (resources.go) is the one list of what the plugin reads:
// adding a kind is a file with its records function and a row there.
//
// Records of routes depend on other objects (their Gateways, ListenerSets
// and Namespaces); a records function gets them through Context, which the
// watch layer implements from its informers' stores, under its route lock.
//
// Imports: index and apimachinery/gateway-api types only, never client-go.
package source
