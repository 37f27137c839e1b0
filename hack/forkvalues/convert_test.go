package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestConvert(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string   // the output, as JSON, when there is no error
		errs []string // each refusal must contain one of these, in order
	}{
		{
			name: "the fork's defaults that change answers are written out",
			in:   "domain: example.com\n",
			want: `{"domain":"example.com","service":{"useTcp":false},"ttl":300,"watchedResources":["Ingress","Service"]}`,
		},
		{
			name: "values that mean the same are carried over",
			in: `
domain: example.com
ttl: 30
apex: ns1.kube-system
secondary: ns2.kube-system
watchedResources: [Ingress, HTTPRoute, DNSEndpoint]
filters: {ingressClasses: [nginx], gatewayClasses: [eg], serviceLabelSelectors: [app=a, tier=b]}
fallthrough: {enabled: true, zones: [example.com]}
service: {type: NodePort, port: 53, useTcp: true, nodePort: 30053}
replicaCount: 3
`,
			want: `{"apex":"ns1.kube-system","domain":"example.com","fallthrough":{"enabled":true,"zones":["example.com"]},` +
				`"filters":{"gatewayClasses":["eg"],"ingressClasses":["nginx"],"serviceLabelSelectors":["app=a","tier=b"]},` +
				`"replicaCount":3,"secondary":"ns2.kube-system","service":{"nodePort":30053,"port":53,"type":"NodePort","useTcp":true},` +
				`"ttl":30,"watchedResources":["Ingress","HTTPRoute","DNSEndpoint"]}`,
		},
		{
			name: "the fork's plugins by default are this chart's; debug and dnsChallenge become plugins",
			in: `
domain: example.com
debug: {enabled: true}
dnsChallenge: {enabled: true, domain: acme.example.net}
extraZonePlugins: [{name: log}, {name: errors}, {name: health}, {name: ready}, {name: prometheus}, {name: forward}, {name: loop}, {name: reload}, {name: loadbalance}]
`,
			want: `{"domain":"example.com","extraZonePlugins":[{"configBlock":"class denial error","name":"log"},{"name":"errors"},` +
				`{"configBlock":"lameduck 5s","name":"health","parameters":":8080"},{"name":"ready","parameters":":8181"},` +
				`{"name":"prometheus","parameters":"0.0.0.0:9153"},{"name":"loop"},{"name":"reload"},{"name":"loadbalance"},{"name":"debug"},` +
				`{"configBlock":"match \"_acme-challenge[.](.*)[.]example[.]com\"\nanswer \"{{ .Name }} 5 IN CNAME {{ index .Match 1 }}.acme.example.net\"\nfallthrough",` +
				`"name":"template","parameters":"IN ANY example.com"}],"service":{"useTcp":false},"ttl":300,"watchedResources":["Ingress","Service"]}`,
		},
		{
			name: "debug is added to a list of one's own",
			in:   "domain: example.com\ndebug: {enabled: true}\nextraZonePlugins: [{name: errors}]\n",
			want: `{"domain":"example.com","extraZonePlugins":[{"name":"errors"},{"name":"debug"}],` +
				`"service":{"useTcp":false},"ttl":300,"watchedResources":["Ingress","Service"]}`,
		},
		{
			name: "a list of plugins of one's own is kept",
			in:   "domain: example.com\nextraZonePlugins: [{name: errors}, {name: cache, parameters: 30}]\n",
			want: `{"domain":"example.com","extraZonePlugins":[{"name":"errors"},{"name":"cache","parameters":30}],` +
				`"service":{"useTcp":false},"ttl":300,"watchedResources":["Ingress","Service"]}`,
		},
		{
			name: "zone files: reload dropped, domains required, fallthrough refused",
			in: `
domain: example.com
zoneFiles:
  - {filename: a.db, domains: example.org, reload: 1m, contents: "x"}
  - {filename: b.db, contents: "x"}
  - {filename: c.db, domains: example.net, fallthrough: {enabled: true}, contents: "x"}
`,
			errs: []string{"zoneFiles[1].domains is required", "zoneFiles[2].fallthrough is not taken"},
		},
		{
			name: "refusals say what to use instead",
			in: `
domain: example.com
scheme: "tls://"
secure: false
watchedResources: [Ingress, Node]
filters: {nodeAddressType: ExternalIP}
service: {sessionAffinity: None}
foo: bar
`,
			errs: []string{"filters.nodeAddressType is not a value", "foo is not a value", "scheme \"tls://\" is not taken: this chart always serves plain DNS",
				"secure: false is not taken", "service.sessionAffinity is not a value", "watchedResources: Node is not taken"},
		},
		{name: "not YAML", in: "domain: [", errs: []string{"the values do not parse"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, errs := convert([]byte(tc.in))
			if len(errs) != len(tc.errs) {
				t.Fatalf("refusals %q, want %d: %q", errs, len(tc.errs), tc.errs)
			}
			for i, e := range errs {
				if !strings.Contains(e, tc.errs[i]) {
					t.Errorf("refusal %q, want it to contain %q", e, tc.errs[i])
				}
			}
			if len(errs) > 0 {
				return
			}
			got, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
