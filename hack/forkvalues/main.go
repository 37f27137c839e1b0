// Command forkvalues converts the values of the k8s-gateway fork's chart
// (github.com/k8s-gateway/k8s_gateway, chart 3.x) into values of this
// repository's chart that serve the same answers:
//
//	go run ./hack/forkvalues < fork-values.yaml > values.json
//	helm install exdns charts/k8s-gateway -f values.json
//
// The output is JSON, which Helm reads as YAML. Each value of the fork's
// chart is carried over, renamed, or refused with what to use instead (see
// docs/guides/migrating-from-k8s-gateway.md); the fork's defaults that change
// answers (ttl 300, Ingress and Service only, UDP only) are written out, so
// that this chart's defaults do not replace them. Notes about values dropped
// without a change of answers go to standard error. Every refusal is
// printed, and the exit status is 1 when there is one.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "forkvalues:", err)
		os.Exit(2)
	}
	out, notes, errs := convert(in)
	for _, n := range notes {
		fmt.Fprintln(os.Stderr, "forkvalues: note:", n)
	}
	if len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, "forkvalues:", e)
		}
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "forkvalues:", err)
		os.Exit(2)
	}
}
