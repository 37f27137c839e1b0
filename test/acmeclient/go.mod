module k8sgw.local/acmeclient

go 1.26

// hack/acme.sh builds this command in a copy under ~/.cache/k8s_gateway/src,
// where it resolves github.com/go-acme/lego/v5 from the module proxy; this
// go.mod only keeps the directory out of the plugin's module.
