{{- define "k8s-gateway.corefile" -}}
{{- $zones := include "k8s-gateway.zones" . | fromJsonArray }}
{{- $_ := include "k8s-gateway.forwardZones" . }}
{{- $port := include "k8s-gateway.dnsPort" . }}
{{- $zoneKeys := list }}
{{- range $zones }}{{ $zoneKeys = append $zoneKeys (include "k8s-gateway.zoneKey" .) }}{{ end }}
{{- $inBlock := list }}
{{- $ownBlock := list }}
{{- range $i, $zf := .Values.zoneFiles }}
{{- $domains := include "k8s-gateway.zoneList" $zf.domains | fromJsonArray }}
{{- $in := 0 }}
{{- range $domains }}{{ if has (include "k8s-gateway.zoneKey" .) $zoneKeys }}{{ $in = add1 $in }}{{ end }}{{ end }}
{{- $entry := dict "filename" $zf.filename "domains" $domains "key" (include "k8s-gateway.zoneFileKey" $zf) }}
{{- if eq $in (len $domains) }}
{{- $inBlock = append $inBlock $entry }}
{{- else if eq $in 0 }}
{{- $ownBlock = append $ownBlock $entry }}
{{- else }}
{{- fail (printf "zoneFiles[%d] (%s): its domains must be either all zones of `domain` (served after k8s_gateway, see fallthrough) or none of them (a server block of their own)" $i $zf.filename) }}
{{- end }}
{{- end }}
{{- $names := list }}
{{- range $i, $v := .Values.views }}
{{- if has $v.name $names }}{{ fail (printf "views[%d]: the name %q is used twice" $i $v.name) }}{{ end }}
{{- $names = append $names $v.name }}
{{- if and (not $v.clients) (not $v.expr) }}{{ fail (printf "views[%d] (%s): set clients or expr" $i $v.name) }}{{ end }}
{{- include "k8s-gateway.serverBlock" (dict "root" $ "zones" $zones "port" $port "inBlock" $inBlock "view" $v) }}
{{ end }}
{{- include "k8s-gateway.serverBlock" (dict "root" $ "zones" $zones "port" $port "inBlock" $inBlock "view" .Values.defaultView) }}
{{- range $ownBlock }}
{{ range .domains }}{{ . }}:{{ $port }} {{ end }}{
    errors
    file /etc/coredns/{{ .key }} {{ join " " .domains }}
}
{{- end }}
{{- end }}

{{/*
zoneFileKey: the ConfigMap key (and file name) of a zoneFiles entry: its
filename and a hash of its contents. An edit changes the Corefile, which the
reload plugin then loads, and the file plugin reads the new contents; the
file plugin alone would wait for a higher SOA serial.
*/}}
{{- define "k8s-gateway.zoneFileKey" -}}
{{ .filename }}-{{ .contents | sha256sum | trunc 10 }}
{{- end }}

{{/*
One server block of the zones: a view's (with its view plugin, address
ranges and plugins) or, without a name, the default block.
*/}}
{{- define "k8s-gateway.serverBlock" -}}
{{- $view := .view | default dict }}
{{- $inBlock := .inBlock }}
{{- with .root -}}
{{ include "k8s-gateway.serverKeys" . }} {
{{- with $view.name }}
    view {{ . }} {
        expr {{ include "k8s-gateway.viewExpr" $view }}
    }
{{- end }}
{{- if include "k8s-gateway.encrypted" . }}
    tls {{ include "k8s-gateway.tlsDir" . }}/tls.crt {{ include "k8s-gateway.tlsDir" . }}/tls.key
{{- end }}
{{- with .Values.multisocket }}
    multisocket {{ . }}
{{- end }}
{{- with .Values.dnssec }}{{ if .keySecret }}
    dnssec {{ regexReplaceAll "\\.\\+.*$" (trimPrefix "K" .keyName) "" }} {
        key file /etc/k8s-gateway/dnssec/{{ required "dnssec.keyName is required with dnssec.keySecret" .keyName }}
    }
{{- end }}{{ end }}
{{- range concat .Values.extraZonePlugins ($view.plugins | default list) }}
    {{ .name }}{{ with .parameters }} {{ . }}{{ end }}{{ with .configBlock }} {
        {{- . | trim | nindent 8 }}
    }{{ end }}
{{- end }}
{{- with (.Values.hiddenPrimary).secondaries }}{{ if not $view.name }}
{{- range concat $.root.Values.extraZonePlugins ($view.plugins | default list) }}
{{- if eq .name "transfer" }}{{ fail "hiddenPrimary.secondaries writes the default block's transfer plugin: remove the transfer of extraZonePlugins or defaultView.plugins" }}{{ end }}
{{- end }}
    transfer {
        to {{ join " " . }}
    }
{{- end }}{{ end }}
    k8s_gateway {{ join " " $.zones }} {
        resources {{ join " " .Values.watchedResources }}
        ttl {{ .Values.ttl }}
        apex {{ include "k8s-gateway.apex" . }}{{ range .Values.apexAddresses }} {{ . }}{{ end }}
        {{- with .Values.secondary }}
        secondary {{ . }}{{ range $.root.Values.secondaryAddresses }} {{ . }}{{ end }}
        {{- end }}
        {{- if .Values.fallthrough.enabled }}
        fallthrough{{ range .Values.fallthrough.zones }} {{ . }}{{ end }}
        {{- end }}
        {{- with .Values.filters }}
        {{- with .ingressClasses }}
        ingressClasses {{ join " " . }}
        {{- end }}
        {{- with .gatewayClasses }}
        gatewayClasses {{ join " " . }}
        {{- end }}
        {{- with .namespaces }}
        namespaces {{ join " " . }}
        {{- end }}
        {{- with include "k8s-gateway.selector" (.labelSelector | default "") }}
        labelSelector {{ . | quote }}
        {{- end }}
        {{- with .serviceLabelSelectors }}
        serviceLabelSelectors{{ if kindIs "string" . }} {{ trim . | quote }}{{ else }}{{ range . }} {{ . | quote }}{{ end }}{{ end }}
        {{- end }}
        {{- end }}
        {{- with $view.include }}
        include {{ join " " . }}
        {{- end }}
        {{- with $view.exclude }}
        exclude {{ join " " . }}
        {{- end }}
        {{- if ne .Values.tenancy.ownership "union" }}
        ownership {{ .Values.tenancy.ownership }}
        {{- end }}
        {{- range $ns, $domains := .Values.tenancy.delegate }}
        delegate {{ $ns }} {{ join " " $domains }}
        {{- end }}
        {{- if .Values.tenancy.events }}
        events
        {{- end }}
        {{- if not (kindIs "invalid" .Values.tenancy.quota) }}
        tenant_quota {{ int64 .Values.tenancy.quota }}
        {{- end }}
        {{- if (.Values.health).enabled }}
        health
        {{- end }}
        {{- with .Values.catalog }}{{ if .zone }}
        catalog {{ .zone }}{{ with .group }} group {{ . }}{{ end }}
        {{- end }}{{ end }}
        {{- with (.Values.dnssec).cds }}
        cds{{ if eq . "delete" }} delete{{ end }}
        {{- end }}
        {{- with (.Values.steering).defaultLocation }}
        default_location {{ . }}
        {{- end }}
        {{- if .Values.persistence.enabled }}
        persist {{ .Values.persistence.mountPath }}{{ with $view.name }}/{{ . }}{{ end }}
        {{- end }}
        {{- if include "k8s-gateway.encrypted" . }}
        tls_reload {{ include "k8s-gateway.tlsDir" . }}/tls.crt {{ include "k8s-gateway.tlsDir" . }}/tls.key
        {{- end }}
        {{- include "k8s-gateway.acmeUpdates" . }}
        {{- with .Values.fleet }}
        {{- if .clusterAPI.enabled }}
        clusterapi{{ range .clusterAPI.namespaces }} {{ . }}{{ end }}
        {{- end }}
        {{- with .failover }}
        failover {{ . }}
        {{- end }}
        {{- if and .clusters .local }}
        {{- if or (not (kindIs "invalid" .localPriority)) .localWeight .localLocation }}
        cluster local {
            {{- if not (kindIs "invalid" .localPriority) }}
            priority {{ int .localPriority }}
            {{- end }}
            {{- with .localWeight }}
            weight {{ int . }}
            {{- end }}
            {{- with .localLocation }}
            location {{ . }}
            {{- end }}
        }
        {{- else }}
        cluster local
        {{- end }}
        {{- end }}
        {{- range .clusters }}
        cluster {{ .name }} {
            kubeconfig {{ include "k8s-gateway.kubeconfigPath" . }}{{ with .context }} {{ . }}{{ end }}
            {{- if kindIs "string" .subdomain }}
            {{- with .subdomain }}
            subdomain {{ . }}
            {{- end }}
            {{- else if .subdomain }}
            subdomain
            {{- end }}
            {{- with .resources }}
            resources {{ join " " . }}
            {{- end }}
            {{- with .namespaces }}
            namespaces {{ join " " . }}
            {{- end }}
            {{- if not (kindIs "invalid" .priority) }}
            priority {{ int .priority }}
            {{- end }}
            {{- with .weight }}
            weight {{ int . }}
            {{- end }}
            {{- with .location }}
            location {{ . }}
            {{- end }}
        }
        {{- end }}
        {{- end }}
    }
{{- range $inBlock }}
    file /etc/coredns/{{ .key }} {{ join " " .domains }}
{{- end }}
}
{{- end }}
{{- end }}

{{/*
The view plugin's expression of a view: its expr, or its clients' ranges.
*/}}
{{- define "k8s-gateway.viewExpr" -}}
{{- if .expr }}{{ .expr }}{{ else }}
{{- $parts := list }}
{{- range .clients }}{{ $parts = append $parts (printf "incidr(client_ip(), '%s')" .) }}{{ end }}
{{- join " || " $parts }}
{{- end }}
{{- end }}
