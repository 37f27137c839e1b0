module k8sgw.local/mmdb

go 1.26

// hack/geo.sh builds this command in a copy under ~/.cache/k8s_gateway/src,
// where it resolves github.com/maxmind/mmdbwriter from the module proxy; this
// go.mod only keeps the directory out of the plugin's module.
