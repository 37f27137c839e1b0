module k8sgw.local/traefik

go 1.26

// hack/baremetal.sh builds this command in a copy under ~/.cache/k8s_gateway/src,
// where it resolves github.com/traefik/traefik/v3 from the module proxy; this
// go.mod only keeps the directory out of the plugin's module.
