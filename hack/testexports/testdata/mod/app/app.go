// Package app uses lib in production.
package app

import "github.com/seed-e581d630/k8s_gateway/lib"

func run() {
	lib.Used()
	c := lib.Config{Set: true, Low: 1}
	c.Run()
	_ = lib.LevelLow
	lib.Choose(nil)
}
