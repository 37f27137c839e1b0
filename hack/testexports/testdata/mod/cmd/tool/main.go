// Command tool uses lib in production, from under cmd/.
package main

import "github.com/seed-e581d630/k8s_gateway/lib"

func main() { lib.UsedByCommand() }
