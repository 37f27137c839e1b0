{{/*
DNS over TLS and DNS over HTTPS (dnsOverTLS, dnsOverHTTPS, tls): the ports the
pods listen on, the certificate's Secret and where it is mounted.
*/}}
{{- define "k8s-gateway.dotPort" -}}8853{{- end }}
{{- define "k8s-gateway.dohPort" -}}8443{{- end }}
{{- define "k8s-gateway.tlsDir" -}}/etc/k8s-gateway/tls{{- end }}

{{/* "true" when the zones are served over TLS or HTTPS too. */}}
{{- define "k8s-gateway.encrypted" -}}
{{- if or .Values.dnsOverTLS.enabled .Values.dnsOverHTTPS.enabled }}true{{ end }}
{{- end }}

{{/*
tlsSecret: the Secret of the certificate: tls.secretName, else with
tls.certManager.enabled "<fullname>-tls"; fails when encryption needs one and
none is given.
*/}}
{{- define "k8s-gateway.tlsSecret" -}}
{{- $name := .Values.tls.secretName }}
{{- if and (not $name) .Values.tls.certManager.enabled }}
{{- $name = printf "%s-tls" (include "k8s-gateway.fullname" .) }}
{{- end }}
{{- if and (include "k8s-gateway.encrypted" .) (not $name) }}
{{- fail "dnsOverTLS and dnsOverHTTPS need a certificate: set tls.secretName to a kubernetes.io/tls Secret, or tls.certManager.enabled" }}
{{- end }}
{{- $name }}
{{- end }}

{{/*
serverKeys: the keys of the k8s_gateway server block: each zone over plain DNS
on the pods' DNS port, and over tls:// and https:// when enabled.
*/}}
{{- define "k8s-gateway.serverKeys" -}}
{{- $zones := include "k8s-gateway.zones" . | fromJsonArray }}
{{- $keys := list }}
{{- range $zones }}{{ $keys = append $keys (printf "%s:%s" . (include "k8s-gateway.dnsPort" $)) }}{{ end }}
{{- with (.Values.catalog).zone }}{{ $keys = append $keys (printf "%s:%s" . (include "k8s-gateway.dnsPort" $)) }}{{ end }}
{{- if .Values.dnsOverTLS.enabled }}
{{- range $zones }}{{ $keys = append $keys (printf "tls://%s:%s" . (include "k8s-gateway.dotPort" $)) }}{{ end }}
{{- end }}
{{- if .Values.dnsOverHTTPS.enabled }}
{{- range $zones }}{{ $keys = append $keys (printf "https://%s:%s" . (include "k8s-gateway.dohPort" $)) }}{{ end }}
{{- end }}
{{- join " " $keys }}
{{- end }}

{{/*
certDNSNames: tls.certManager.dnsNames, else the nameserver's name in each
forward zone (an absolute apex: that name alone). JSON list.
*/}}
{{- define "k8s-gateway.certDNSNames" -}}
{{- $names := .Values.tls.certManager.dnsNames }}
{{- if not $names }}
{{- $apex := include "k8s-gateway.apex" . }}
{{- if hasSuffix "." $apex }}
{{- $names = list ($apex | trimSuffix ".") }}
{{- else }}
{{- range include "k8s-gateway.forwardZones" . | fromJsonArray }}
{{- $names = append $names (printf "%s.%s" $apex (. | trimSuffix ".")) }}
{{- end }}
{{- end }}
{{- end }}
{{- $names | uniq | toJson }}
{{- end }}

{{/*
replicas: the number of pods the PodDisruptionBudget plans for: replicaCount,
or with autoscaling its minReplicas. Fails on an autoscaling setup the HPA
cannot follow, and on a budget that lets no pod go.
*/}}
{{- define "k8s-gateway.replicas" -}}
{{- $n := int .Values.replicaCount }}
{{- with .Values.autoscaling }}
{{- if .enabled }}
{{- if gt (int .minReplicas) (int .maxReplicas) }}
{{- fail (printf "autoscaling.minReplicas (%d) is above autoscaling.maxReplicas (%d)" (int .minReplicas) (int .maxReplicas)) }}
{{- end }}
{{- $cpu := "" }}
{{- with $.Values.resources }}{{ with .requests }}{{ with .cpu }}{{ $cpu = toString . }}{{ end }}{{ end }}{{ end }}
{{- if not $cpu }}
{{- fail "autoscaling.enabled needs resources.requests.cpu: the HPA's target is a percentage of it" }}
{{- end }}
{{- $n = int .minReplicas }}
{{- end }}
{{- end }}
{{- $pdb := .Values.podDisruptionBudget }}
{{- if and (gt $n 1) (not $pdb.maxUnavailable) (not (kindIs "string" $pdb.minAvailable)) }}
{{- if ge (int ($pdb.minAvailable | default 1)) $n }}
{{- fail (printf "podDisruptionBudget.minAvailable (%d) must be below the number of pods (%d), or no pod could be evicted and no node drained" (int $pdb.minAvailable) $n) }}
{{- end }}
{{- end }}
{{- $n }}
{{- end }}
