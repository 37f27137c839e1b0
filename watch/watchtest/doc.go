// Package watchtest is a fake API for the tests of watch, fleet and the
// plugin, in the spirit of net/http/httptest: an API (watch.API and
// watch.EventSink) served from client-go's fake clientset, a Gateway API
// object tracker and a fake dynamic client, whose objects the informers
// decode as they decode those of a real API server.
//
// The fake's object tracker honours label selectors on lists but ignores
// field selectors, and ignores both on watches: the nameserver informer,
// which lists one Service by name, sees every Service of its namespace.
//
// Imports: source and internal packages only, never watch, so that the
// tests inside watch can use it.
package watchtest
