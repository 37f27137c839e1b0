// Package watch reads one cluster: it runs an informer per kind that the
// configuration asks for, and puts each object's records (made by package
// source) into a Sink: put or remove the records of one key.
//
// In: a Config (kinds, filters, zones, ownership) and an API client (the
// REST client of client.go, or a fake in tests). Out: Sink calls, Events
// about refused or conflicting names (events.go, eventwriter.go), and what
// the plugin asks of a Controller (Synced, SyncedKinds, SinceContact).
//
// Inside: probing each kind before its informer starts, and again while the
// cluster does not serve it or RBAC forbids it (probe.go, versions.go);
// the API guard that retries lists and watches and relists after an
// outage (internal/informer, the one informer recipe; apiguard.go here); the dependency graph, so that a change of
// a Gateway, ListenerSet or Namespace recomputes its routes
// (dependencies.go, the routeGraph); delegation under the delegated ownership policy
// (tenancy.go); the health option (health.go): EndpointSlices counted per
// Service, claims marked Unhealthy, and the Services, Ingresses and routes of
// a Service whose health flips published again; and the informers shared by
// the controllers that read one cluster with the same credentials
// (shared.go): one cache and one watch per kind version, namespace,
// server-side filter and health setting, each controller with its own handler.
//
// Locks: Sink methods are called from informer handlers; those of the
// Gateway API kinds hold the controller's route lock, so a Sink must not
// call back into the controller. Context methods run under that lock too.
// With health, Services and Ingresses are published under health.mu, which
// is taken before the route lock, never under it.
//
// Imports: source and index; never the plugin or fleet.
package watch
