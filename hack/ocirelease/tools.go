//go:build tools

package main

// crane (go-containerregistry's command line) is built from this module's
// go.sum by hack/release.sh: the platforms' digests of the released index.
import _ "github.com/google/go-containerregistry/cmd/crane"
