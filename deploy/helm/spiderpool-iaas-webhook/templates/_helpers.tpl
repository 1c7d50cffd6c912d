{{/*
The chart renders the kustomize sources themselves: deploy/base, deploy/components/* and
deploy/overlays/cert-manager, copied under files/ by `npm run generate` (Helm reads nothing
outside its chart directory). Each kustomization's `resources:` decides which files are
read, so a file added there is installed by both tools without a template edit. The templates change only what kustomize
names differently (the namespace, Helm's labels) and what a value names.
*/}}

{{/*
"sw.objects": the objects of the kustomization in directory .dir (a path under the
chart), as YAML `items: [...]`: every document of every file its `resources:` lists, in
that order. Entries that are directories (another kustomization, e.g. the overlay's
../../base) are skipped: the caller renders those itself. Fails naming the file when a
listed file is missing or a document is not YAML.
*/}}
{{- define "sw.objects" -}}
{{- $root := .root -}}
{{- $dir := .dir -}}
{{- $k := $root.Files.Get (printf "%s/kustomization.yaml" $dir) | fromYaml -}}
{{- $items := list -}}
{{- range $k.resources -}}
{{- if or (hasSuffix ".yaml" .) (hasSuffix ".yml" .) -}}
{{- $file := printf "%s/%s" $dir . -}}
{{- $text := $root.Files.Get $file -}}
{{- if not $text -}}
{{- fail (printf "%s: listed in %s/kustomization.yaml but missing or empty in the chart" $file $dir) -}}
{{- end -}}
{{- range regexSplit "(?m)^---[ \\t]*$" $text -1 -}}
{{- $o := fromYaml . -}}
{{- if hasKey $o "Error" -}}
{{- fail (printf "%s: %s" $file (get $o "Error")) -}}
{{- end -}}
{{- if $o.kind -}}
{{- $items = append $items $o -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml (dict "items" $items) -}}
{{- end -}}

{{/*
"sw.base": deploy/base/kustomization.yaml plus what the templates read from
deploy/base once: the webhook configuration's name (its --manage-webhook-configuration), the TLS Secret's name, the
Spiderpool namespace and ConfigMap name deploy/base's Deployment is written for (its
--configmap-namespace and --configmap-name), and the cert-manager overlay's Certificate
that writes that Secret. YAML; use with fromYaml.
*/}}
{{- define "sw.base" -}}
{{- $k := .Files.Get "files/base/kustomization.yaml" | fromYaml -}}
{{- $objects := (include "sw.objects" (dict "root" . "dir" "files/base") | fromYaml).items -}}
{{- $info := dict "namespace" $k.namespace "images" ($k.images | default list) "objects" $objects -}}
{{- range $objects -}}
{{- if eq .kind "ValidatingWebhookConfiguration" -}}
{{- $_ := set $info "webhookConfiguration" .metadata.name -}}
{{- end -}}
{{- if eq .kind "Deployment" -}}
{{- range .spec.template.spec.containers -}}
{{- range .args -}}
{{- if hasPrefix "--configmap-namespace=" . -}}{{- $_ := set $info "spiderpoolNamespace" (trimPrefix "--configmap-namespace=" .) -}}{{- end -}}
{{- if hasPrefix "--configmap-name=" . -}}{{- $_ := set $info "configName" (trimPrefix "--configmap-name=" .) -}}{{- end -}}
{{- if hasPrefix "--tls-secret=" . -}}{{- $_ := set $info "tlsSecret" (trimPrefix "--tls-secret=" .) -}}{{- end -}}
{{- if hasPrefix "--manage-webhook-configuration=" . -}}{{- $_ := set $info "webhookConfiguration" (trimPrefix "--manage-webhook-configuration=" .) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- range .spec.template.spec.volumes -}}
{{- if and .secret (not (hasKey $info "tlsSecret")) -}}{{- $_ := set $info "tlsSecret" .secret.secretName -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range list "webhookConfiguration" "spiderpoolNamespace" "configName" "tlsSecret" -}}
{{- if not (hasKey $info .) -}}
{{- fail (printf "deploy/base no longer says its %s (the chart reads it from there): update templates/_helpers.tpl" .) -}}
{{- end -}}
{{- end -}}
{{- toYaml $info -}}
{{- end -}}

{{/* Labels Helm's conventions add to every object's metadata (never to a selector). */}}
{{- define "sw.labels" -}}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The image reference: image.repository, then @image.digest when set (a released chart
pins its image so), else :image.tag or the chart's appVersion. */}}
{{- define "sw.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/*
"sw.emit": one object as a YAML document, after what every object gets: Helm's labels,
and the namespace kustomize's `namespace:` and replacements give it (deploy/base's own
namespace becomes the release's, deploy/base's Spiderpool namespace becomes
spiderpool.namespace; a cluster-scoped object has none). Arguments: root, base (from
"sw.base"), obj.
*/}}
{{- define "sw.emit" -}}
{{- $root := .root -}}
{{- $base := .base -}}
{{- $o := .obj -}}
{{- $meta := $o.metadata -}}
{{- $_ := set $meta "labels" (merge (include "sw.labels" $root | fromYaml) ($meta.labels | default dict)) -}}
{{- if $meta.namespace -}}
{{- if eq $meta.namespace $base.spiderpoolNamespace -}}
{{- $_ := set $meta "namespace" $root.Values.spiderpool.namespace -}}
{{- else -}}
{{- $_ := set $meta "namespace" $root.Release.Namespace -}}
{{- end -}}
{{- end -}}
{{- range $o.subjects -}}
{{- if and (eq .kind "ServiceAccount") (eq (.namespace | default "") $base.namespace) -}}
{{- $_ := set . "namespace" $root.Release.Namespace -}}
{{- end -}}
{{- end }}
---
{{ toYaml $o }}
{{- end -}}

{{/*
"sw.args": a container's args with flags set or dropped, as YAML `args: [...]`. .set maps
a flag (`--name`) to its value (`--name=value`; "" for a flag without one): an existing
occurrence (`--name` or `--name=...`) is replaced where it stands, a missing one appended
(in name order). Flags in .drop are removed.
*/}}
{{- define "sw.args" -}}
{{- $set := .set -}}
{{- $out := list -}}
{{- $seen := dict -}}
{{- range .args -}}
{{- $name := regexReplaceAll "=.*$" . "" -}}
{{- if has $name $.drop -}}
{{- else if hasKey $set $name -}}
{{- if not (hasKey $seen $name) -}}
{{- $v := get $set $name -}}
{{- $out = append $out (ternary $name (printf "%s=%s" $name $v) (eq $v "")) -}}
{{- $_ := set $seen $name true -}}
{{- end -}}
{{- else -}}
{{- $out = append $out . -}}
{{- end -}}
{{- end -}}
{{- range $name := keys $set | sortAlpha -}}
{{- if not (hasKey $seen $name) -}}
{{- $v := get $set $name -}}
{{- $out = append $out (ternary $name (printf "%s=%s" $name $v) (eq $v "")) -}}
{{- end -}}
{{- end -}}
{{- toYaml (dict "args" $out) -}}
{{- end -}}

{{/* Metadata of the pre-delete hook objects (unregister-hook.yaml); the caller adds its hook-weight. */}}
{{- define "sw.hookMetadata" -}}
labels:
  app.kubernetes.io/name: spiderpool-iaas-webhook
  app.kubernetes.io/component: unregister-hook
  {{- include "sw.labels" . | nindent 2 }}
annotations:
  helm.sh/hook: pre-delete
  helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end }}

{{/*
"sw.action": the enforcement action of rule .rule (a src/rules name; "" for the default):
enforcement.rules.<rule>, else enforcement.default, else Deny. .root is the chart's root.
*/}}
{{- define "sw.action" -}}
{{- $enforcement := .root.Values.enforcement | default dict -}}
{{- get ($enforcement.rules | default dict) (.rule | default "") | default ($enforcement.default | default "Deny") -}}
{{- end -}}
