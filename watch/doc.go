// Package watch reads one cluster: it runs an informer per kind that the
// configuration asks for, and puts each object's records (made by package
// source) into a Sink: put or remove the records of one key.
//
// In: a Config (kinds, filters, zones, ownership) and an API client (the
// REST client of client.go, or watchtest's fake in tests). Out: Sink calls,
// Events about refused or conflicting names (events.go, eventwriter.go), and
// what the plugin asks of a Controller (Start, Synced, SyncedKinds, Stop,
// Complete, SinceContact, Ping, MayPublish, SetHealthHook, Events).
//
// Inside, a Controller composes one type per job, each with its state, its
// lock and its tests:
//   - stores (stores.go): the running informers by kind and namespace, and
//     source.Context over their caches (Gateways, ListenerSets, Namespaces'
//     labels and domains, the default IngressClass).
//   - routeGraph (dependencies.go): what depends on what (a route on its
//     Gateways, ListenerSets and Namespace; an Ingress, under ingressClasses,
//     on the default IngressClass), and the route lock; a change publishes
//     its dependents again.
//   - health (health.go): the health option: EndpointSlices counted per
//     Service, claims marked Unhealthy, an Ingress's or a route's unhealthy
//     records under a part of their own, flips told to the log and the hook.
//   - publisher (publish.go, warnings.go): the event path: the informers'
//     handlers turn an object into records, give them a claim (owner,
//     priority, weight, location, health) under the namespaces option, and
//     put them into the sink; warnings logged once per process, refused
//     names told to Config.Refused, Namespaces' delegated domains. A Service
//     whose health flips is published again, and so are the Ingresses and
//     routes it backs.
//   - prober (probe.go, versions.go): whether, and at which version, the
//     cluster serves and allows each kind: before its informer starts, and
//     again while the cluster does not serve it or RBAC forbids it.
//   - sharer (shared.go): starts an informer, or joins the one another
//     controller that reads the cluster with the same credentials runs
//     (one cache and one watch per kind version, namespace, server-side
//     filter and health setting, each controller with its own handler,
//     which queues each event at once and handles it on a goroutine of its
//     own (queued.go): client-go's per-handler buffer, which never shrinks,
//     stays small when a block joins a running informer).
//
// The Controller's own job is the lifecycle (controller.go, informer.go):
// which informers the configuration asks for, starting those of the kinds
// the prober found readable, following the API guard that retries lists
// and watches and relists after an outage (internal/informer, the one
// informer recipe; its metrics in apiguard.go), switching to a newer
// version of a kind, stopping them; and whether its view is whole and when
// it last heard from the API server (complete.go).
//
// Locks: Sink methods are called from informer handlers; those of the
// dependent kinds hold the route lock (routeGraph.mu), so a Sink must not
// call back into the controller. Context methods run under that lock too.
// With health, Services and Ingresses are published under health.mu, which
// is taken before the route lock, never under it. stores.mu and
// publisher.mu are taken last, for a map access, under any of them.
//
// Imports: source and index; never the plugin or fleet.
package watch
