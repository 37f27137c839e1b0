package watch

import (
	"fmt"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// recordsOf returns what obj publishes, from w's source function. A panic
// there (a bug, on an object that any tenant may write) must not end the
// process, which would then fail on the same object at every start: the
// object publishes nothing, and its warning, logged with its name, says why.
func recordsOf(w *watched, obj any) (res source.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = source.Result{Warnings: []string{fmt.Sprintf("the plugin failed on this object (a bug: please report it), which publishes nothing: %.200v", p)}}
		}
	}()
	return w.records(obj)
}
