package app

import "github.com/seed-e581d630/k8s_gateway/lib"

func use() { lib.OnlyTests() }
