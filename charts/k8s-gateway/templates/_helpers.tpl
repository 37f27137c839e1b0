{{/* The chart name, truncated to a DNS label. */}}
{{- define "k8s-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The fully qualified app name: the Service, Deployment, ServiceAccount... and,
with the namespace, the default apex NAME.NAMESPACE. A release name that
contains the chart name is used as it is.
*/}}
{{- define "k8s-gateway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "k8s-gateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "k8s-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "k8s-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "k8s-gateway.labels" -}}
{{ if .Values.helmLabels -}}
helm.sh/chart: {{ include "k8s-gateway.chart" . }}
{{ end -}}
{{ include "k8s-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | toString | quote }}
{{- if .Values.helmLabels }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
{{- with .Values.customLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "k8s-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "k8s-gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Cluster-scoped objects carry the namespace: NAME.NAMESPACE, like the apex. */}}
{{- define "k8s-gateway.clusterName" -}}
{{- printf "%s.%s" (include "k8s-gateway.fullname" .) .Release.Namespace }}
{{- end }}

{{- define "k8s-gateway.image" -}}
{{- $repo := .Values.image.repository }}
{{- with .Values.image.registry }}{{ $repo = printf "%s/%s" . $repo }}{{ end }}
{{- with .Values.image.digest }}
{{- printf "%s@%s" $repo . }}
{{- else }}
{{- printf "%s:%s" $repo (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}
{{- end }}

{{/*
hints: values of other charts that this one names differently. The schema
accepts them so that rendering can say what to use instead.
*/}}
{{- define "k8s-gateway.hints" -}}
{{- $hints := dict
  "debug" "add {name: debug} to extraZonePlugins"
  "dnsChallenge" "set acme.enabled (RFC 2136 updates for ACME DNS-01 challenges)"
  "env" "use extraEnv"
  "scheme" "plain DNS is always served; set dnsOverTLS.enabled or dnsOverHTTPS.enabled (with tls) to serve TLS or HTTPS beside it (hack/forkvalues converts the k8s-gateway fork's values)"
  "secure" "the pods always run as a non-root user (podSecurityContext, securityContext) (hack/forkvalues converts the k8s-gateway fork's values)"
  "args" "use extraArgs (and logFormat for -log-format)"
  "sidecars" "use extraContainers"
  "volumes" "use extraVolumes"
  "volumeMounts" "use extraVolumeMounts" }}
{{- range $key := keys $hints | sortAlpha }}
{{- if hasKey $.Values $key }}
{{- fail (printf "%s is not a value of this chart: %s" $key (get $hints $key)) }}
{{- end }}
{{- end }}
{{- end }}

{{/* zoneList: a string of space-separated zones, or a list, as a JSON list. */}}
{{- define "k8s-gateway.zoneList" -}}
{{- if kindIs "string" . }}
{{- splitList " " (. | replace "\t" " " | replace "\n" " ") | compact | toJson }}
{{- else }}
{{- . | default list | compact | toJson }}
{{- end }}
{{- end }}

{{/* The zones of `domain`, as a JSON list. */}}
{{- define "k8s-gateway.zones" -}}
{{- $zones := include "k8s-gateway.zoneList" .Values.domain | fromJsonArray }}
{{- if not $zones }}
{{- fail "domain is required: the zone(s) to serve, e.g. --set domain=example.com" }}
{{- end }}
{{- toJson $zones }}
{{- end }}

{{/* zoneKey: a zone compared case-insensitively, without the trailing dot. */}}
{{- define "k8s-gateway.zoneKey" -}}
{{- . | lower | trimSuffix "." }}
{{- end }}

{{/*
The forward zones of `domain` (not under in-addr.arpa or ip6.arpa), as a JSON
list. In a reverse zone a relative apex or secondary is the name in the first
of them, as the plugin reads it; without any, both must be absolute.
*/}}
{{- define "k8s-gateway.forwardZones" -}}
{{- $out := list }}
{{- range include "k8s-gateway.zones" . | fromJsonArray }}
{{- $k := include "k8s-gateway.zoneKey" . }}
{{- if not (or (eq $k "in-addr.arpa") (hasSuffix ".in-addr.arpa" $k) (eq $k "ip6.arpa") (hasSuffix ".ip6.arpa" $k)) }}
{{- $out = append $out . }}
{{- end }}
{{- end }}
{{- if not $out }}
{{- range list (include "k8s-gateway.apex" .) .Values.secondary }}
{{- if and . (not (hasSuffix "." .)) }}
{{- fail (printf "domain has only reverse zones, which have no names with addresses: apex and secondary must be absolute names (ending in a dot), not %q" .) }}
{{- end }}
{{- end }}
{{- end }}
{{- $out | toJson }}
{{- end }}

{{- define "k8s-gateway.apex" -}}
{{- .Values.apex | default (printf "%s.%s" (include "k8s-gateway.fullname" .) .Release.Namespace) }}
{{- end }}

{{/*
The namespaces of the nameserver Services: apex and secondary of the form
NAME.NAMESPACE (two labels, relative) name a Service, whose addresses give the
glue. JSON list.
*/}}
{{- define "k8s-gateway.nameserverNamespaces" -}}
{{- $out := list }}
{{- range list (include "k8s-gateway.apex" .) .Values.secondary }}
{{- if and . (not (hasSuffix "." .)) }}
{{- $parts := splitList "." (lower .) }}
{{- if eq (len $parts) 2 }}
{{- $out = append $out (index $parts 1) }}
{{- end }}
{{- end }}
{{- end }}
{{- $out | uniq | toJson }}
{{- end }}

{{- define "k8s-gateway.routeKinds" -}}
{{- list "HTTPRoute" "GRPCRoute" "TLSRoute" "TCPRoute" "UDPRoute" | toJson }}
{{- end }}

{{/*
The rules on namespaced resources: list and watch on exactly the watched
kinds, plus gateways, listenersets (and the experimental xlistenersets) when
routes are watched (routes publish through Gateways and ListenerSets), and
create and patch on events with tenancy.events. In the ClusterRole without
filters.namespaces, in a Role in each listed namespace with it.
*/}}
{{- define "k8s-gateway.namespacedRules" -}}
{{- $w := .Values.watchedResources }}
{{- $routes := list }}
{{- range include "k8s-gateway.routeKinds" . | fromJsonArray }}
{{- if has . $w }}{{ $routes = append $routes (printf "%ss" (lower .)) }}{{ end }}
{{- end }}
{{- if has "Service" $w }}
- apiGroups: [""]
  resources: ["services"]
  verbs: ["list", "watch"]
{{- end }}
{{- if has "Ingress" $w }}
- apiGroups: ["networking.k8s.io"]
  resources: ["ingresses"]
  verbs: ["list", "watch"]
{{- end }}
{{- if and (.Values.health).enabled (or (has "Service" $w) (has "Ingress" $w) $routes) }}
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["list", "watch"]
{{- end }}
{{- if has "DNSEndpoint" $w }}
- apiGroups: ["externaldns.k8s.io"]
  resources: ["dnsendpoints"]
  verbs: ["list", "watch"]
{{- end }}
{{- with $routes }}
- apiGroups: ["gateway.networking.k8s.io"]
  resources: {{ concat (list "gateways" "listenersets") . | toJson }}
  verbs: ["list", "watch"]
- apiGroups: ["gateway.networking.x-k8s.io"]
  resources: ["xlistenersets"]
  verbs: ["list", "watch"]
{{- end }}
{{- if .Values.tenancy.events }}
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end }}
{{- end }}

{{/*
"true" when the plugin reads Namespaces: when routes are watched (listeners
admit routes by namespace labels) or under the delegated ownership policy
(Namespaces carry their domains).
*/}}
{{- define "k8s-gateway.readsNamespaces" -}}
{{- $routes := false }}
{{- range include "k8s-gateway.routeKinds" . | fromJsonArray }}
{{- if has . $.Values.watchedResources }}{{ $routes = true }}{{ end }}
{{- end }}
{{- if or $routes (eq .Values.tenancy.ownership "delegated") }}true{{ end }}
{{- end }}

{{/*
The rule of a Role in a namespace of filters.namespaces on that Namespace
itself: the plugin gets and watches it by name, which the API server
authorizes in that namespace.
*/}}
{{- define "k8s-gateway.namespaceObjectRules" -}}
{{- if include "k8s-gateway.readsNamespaces" . }}
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: ["get", "watch"]
{{- end }}
{{- end }}

{{/*
The rules on cluster-scoped resources, which only a ClusterRole can grant:
namespaces when the plugin reads them without filters.namespaces (with it,
the Roles grant the listed Namespaces), ingressclasses when Ingresses are
filtered by class (a class-less Ingress has the default class). Empty when
no feature needs them.
*/}}
{{- define "k8s-gateway.clusterScopedRules" -}}
{{- $w := .Values.watchedResources }}
{{- if and (include "k8s-gateway.readsNamespaces" .) (not (.Values.filters).namespaces) }}
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: ["list", "watch"]
{{- end }}
{{- if and (has "Ingress" $w) (.Values.filters).ingressClasses }}
- apiGroups: ["networking.k8s.io"]
  resources: ["ingressclasses"]
  verbs: ["list", "watch"]
{{- end }}
{{- end }}

{{/*
The ClusterRole's rules: with filters.namespaces only the cluster-scoped
ones, without it every rule.
*/}}
{{- define "k8s-gateway.clusterRules" -}}
{{- if not (.Values.filters).namespaces }}
{{- include "k8s-gateway.namespacedRules" . }}
{{- end }}
{{- include "k8s-gateway.clusterScopedRules" . }}
{{- with (.Values.fleet).clusterAPI }}
{{- if and .enabled (not .namespaces) }}
{{ include "k8s-gateway.clusterAPIRules" . }}
{{- end }}
{{- end }}
{{- end }}

{{/*
clusterAPIRules: what fleet.clusterAPI reads in the management cluster:
Cluster API's Clusters and their kubeconfig Secrets (RBAC cannot narrow
Secrets to those names or to a label).
*/}}
{{- define "k8s-gateway.clusterAPIRules" -}}
- apiGroups: ["cluster.x-k8s.io"]
  resources: ["clusters"]
  verbs: ["list", "watch"]
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["list", "watch"]
{{- end }}

{{/*
kubeconfigPath: where the kubeconfig of a fleet.clusters entry is mounted.
*/}}
{{- define "k8s-gateway.kubeconfigPath" -}}
/etc/k8s-gateway/clusters/{{ .name }}/{{ .key | default "value" }}
{{- end }}

{{/*
pluginPort: the port of a plugin of extraZonePlugins ("health", "ready",
"prometheus"), from its address parameter, else the plugin's default; empty
when the plugin is not configured. Argument: list NAME DEFAULT ROOT.
*/}}
{{- define "k8s-gateway.pluginPort" -}}
{{- $name := index . 0 }}
{{- $default := index . 1 }}
{{- $root := index . 2 }}
{{- $port := "" }}
{{- range $root.Values.extraZonePlugins }}
{{- if and (eq .name $name) (not $port) }}
{{- $m := regexFind ":[0-9]+$" (toString (.parameters | default "")) }}
{{- $port = $m | trimPrefix ":" | default $default }}
{{- end }}
{{- end }}
{{- $port }}
{{- end }}

{{/* The port CoreDNS listens on for DNS in the pod (unprivileged). */}}
{{- define "k8s-gateway.dnsPort" -}}1053{{- end }}

{{/* selector: a label selector given as a string or a list. */}}
{{- define "k8s-gateway.selector" -}}
{{- if kindIs "string" . }}{{ . | trim }}{{ else }}{{ join "," . }}{{ end }}
{{- end }}

{{/*
The Corefile: one server block for the zones of `domain`, with the
extraZonePlugins and k8s_gateway (and the zone files of the same zones, after
it, for fallthrough); one server block per other zone file.
*/}}
{{/*
GOMEMLIMIT: goRuntime.memLimit, or 90% of resources.limits.memory in bytes,
or nothing.
*/}}
{{- define "k8s-gateway.goMemLimit" -}}
{{- if .Values.goRuntime.memLimit -}}
{{ .Values.goRuntime.memLimit }}
{{- else -}}
{{- $limit := "" }}
{{- with .Values.resources }}{{ with .limits }}{{ with .memory }}{{ $limit = toString . }}{{ end }}{{ end }}{{ end }}
{{- if $limit -}}
{{- $digits := regexFind "^[0-9]+" $limit }}
{{- $unit := trimPrefix $digits $limit }}
{{- $factors := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 }}
{{- if and $digits (hasKey $factors $unit) -}}
{{ div (mul (atoi $digits) (get $factors $unit) 9) 10 }}
{{- else -}}
{{- fail (printf "resources.limits.memory %q: cannot derive GOMEMLIMIT from it; set goRuntime.memLimit" $limit) }}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
acmeKeysFrom: where the keys of Secrets are read, checked: "clusterWide"
(acme.secrets.clusterWide, every namespace), "keyNamespace" (the one
namespace of acme.keyNamespace, each Secret naming its tenant),
"namespaces" (acme.namespaces, each Secret acting for its own), or "" when
acme.secretKeys is off. RBAC cannot narrow Secrets to a label, so there is
no default: a ClusterRole on Secrets only when asked for by name.
*/}}
{{- define "k8s-gateway.acmeKeysFrom" -}}
{{- with .Values.acme }}
{{- $clusterWide := (.secrets).clusterWide }}
{{- if .secretKeys }}
{{- if $clusterWide }}
{{- if or .namespaces .keyNamespace }}
{{- fail "acme.secrets.clusterWide reads the Secrets of every namespace: leave acme.namespaces and acme.keyNamespace empty, or set acme.secrets.clusterWide: false" }}
{{- end -}}
clusterWide
{{- else if .keyNamespace -}}
keyNamespace
{{- else if .namespaces -}}
namespaces
{{- else }}
{{- fail "acme.secretKeys reads the tenants' TSIG keys from Secrets, and RBAC cannot narrow Secrets to a label: set acme.namespaces (a Role in each tenant's namespace, whose Secrets act for it), acme.keyNamespace (one namespace of yours whose Secrets name their tenant with the label k8s-gateway.dns/tenant), or acme.secrets.clusterWide: true (the pod may read every Secret of the cluster); or acme.secretKeys: false with acme.keys" }}
{{- end }}
{{- else if $clusterWide }}
{{- fail "acme.secrets.clusterWide needs acme.secretKeys" }}
{{- else if .keyNamespace }}
{{- fail "acme.keyNamespace needs acme.secretKeys" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
acmeUpdates: the updates block of the acme values (plugin README:
Certificates (ACME DNS-01)), and the checks that make it usable.
*/}}
{{- define "k8s-gateway.acmeUpdates" -}}
{{- with .Values.acme }}
{{- if .enabled }}
{{- if not (has "DNSEndpoint" $.Values.watchedResources) }}
{{- fail "acme.enabled needs DNSEndpoint in watchedResources: the challenges are DNSEndpoints" }}
{{- end }}
{{- if not (or .keys .secretKeys) }}
{{- fail "acme.enabled needs keys: acme.secretKeys or acme.keys" }}
{{- end }}
{{- $from := include "k8s-gateway.acmeKeysFrom" $ }}
{{- range .keys }}
{{- if and $.Values.acme.namespaces (not (has .namespace $.Values.acme.namespaces)) }}
{{- fail (printf "acme.keys %s: its namespace %s is not in acme.namespaces, where the chart grants the writes" .name .namespace) }}
{{- end }}
{{- end }}
        updates {
            listen :{{ .port }}
            {{- range .keys }}
            key {{ .name }} {{ .algorithm | default "hmac-sha256" }} /etc/k8s-gateway/tsig/{{ .secretName }}/{{ .key | default "secret" }} {{ .namespace }}
            {{- end }}
            {{- if eq $from "clusterWide" }}
            secrets
            {{- else if eq $from "namespaces" }}
            secrets{{ range .namespaces }} {{ . }}{{ end }}
            {{- else if eq $from "keyNamespace" }}
            tenant_secrets {{ .keyNamespace }}{{ range .namespaces }} {{ . }}{{ end }}
            {{- end }}
            expire {{ .expire }}
            maxttl {{ .maxTTL }}
            rate {{ .rate }}
        }
{{- end }}
{{- end }}
{{- end }}

{{/*
acmeRules: what the updates option needs where the challenges are written:
the plugin's DNSEndpoints (get, create, update, delete; list and watch for
the janitor), and the Secrets holding keys when they are read there too.
Its argument is a list: the root context and whether Secrets are included.
*/}}
{{- define "k8s-gateway.acmeRules" -}}
- apiGroups: ["externaldns.k8s.io"]
  resources: ["dnsendpoints"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
{{- if index . 1 }}
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["list", "watch"]
{{- end }}
{{- end }}

{{/*
acmeKeySecrets: the Secrets of the release's namespace holding the
Corefile's keys, each mounted once.
*/}}
{{- define "k8s-gateway.acmeKeySecrets" -}}
{{- $out := list }}
{{- range .Values.acme.keys }}{{ $out = append $out .secretName }}{{ end }}
{{- $out | uniq | toJson }}
{{- end }}

{{/*
secondaryCIDRs: the addresses of hiddenPrimary.secondaries as CIDRs of one
address (ADDRESS, ADDRESS:PORT, [IPV6]:PORT), a JSON list.
*/}}
{{- define "k8s-gateway.secondaryCIDRs" -}}
{{- $out := list }}
{{- range (.Values.hiddenPrimary).secondaries }}
{{- $a := toString . }}
{{- if regexMatch "^[0-9.]+(:[0-9]+)?$" $a }}
{{- $out = append $out (printf "%s/32" (regexReplaceAll ":[0-9]+$" $a "")) }}
{{- else }}
{{- $out = append $out (printf "%s/128" (regexReplaceAll "^\\[(.*)\\]:[0-9]+$" $a "${1}")) }}
{{- end }}
{{- end }}
{{- $out | uniq | toJson }}
{{- end }}
