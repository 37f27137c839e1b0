package watch

import (
	"strings"
	"sync"
)

// logWarnings logs what a source found wrong with an object, once per
// change, and once per process: the blocks (views) that read one cluster
// share the object, and its warning (an ignored Gateway address type, say)
// is logged by the first of them only.
func (c *Controller) logWarnings(key string, warnings []string) {
	text := strings.Join(warnings, "; ")
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.warnings[key]
	if old == text {
		return
	}
	if old != "" {
		loggedWarnings.release(key + ": " + old)
	}
	if text == "" {
		delete(c.warnings, key)
		return
	}
	c.warnings[key] = text
	if line := key + ": " + text; loggedWarnings.hold(line) {
		log.Warning(line)
	}
}

// releaseWarnings lets go of the warnings of a stopped controller: another
// block that still reads the object logs nothing again, a new one that
// comes with a reload neither while the line is held.
func (c *Controller) releaseWarnings() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, text := range c.warnings {
		loggedWarnings.release(key + ": " + text)
	}
	clear(c.warnings)
}

// loggedWarnings counts, for each warning line, the controllers that hold it.
var loggedWarnings = warningHolders{held: map[string]int{}}

type warningHolders struct {
	mu   sync.Mutex
	held map[string]int
}

// hold adds a holder of line, and reports whether it is the first.
func (w *warningHolders) hold(line string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held[line]++
	return w.held[line] == 1
}

func (w *warningHolders) release(line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held[line]--; w.held[line] <= 0 {
		delete(w.held, line)
	}
}
