package watch

import (
	"slices"
	"strings"
	"sync"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// logWarnings logs what a source found wrong with an object, once per
// change, and once per process: the blocks (views) that read one cluster
// share the object, and its warning (an ignored Gateway address type, say)
// is logged by the first of them only.
func (p *publisher) logWarnings(key string, warnings []string) {
	text := strings.Join(warnings, "; ")
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.warnings[key]
	if old == text {
		return
	}
	if old != "" {
		loggedWarnings.release(key + ": " + old)
	}
	if text == "" {
		delete(p.warnings, key)
		return
	}
	p.warnings[key] = text
	if line := key + ": " + text; loggedWarnings.hold(line) {
		log.Warning(line)
	}
}

// releaseWarnings lets go of the warnings of a stopped controller: another
// block that still reads the object logs nothing again, a new one that
// comes with a reload neither while the line is held.
func (p *publisher) releaseWarnings() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, text := range p.warnings {
		loggedWarnings.release(key + ": " + text)
	}
	clear(p.warnings)
}

// report tells cfg.Refused of the names an object is newly refused, as the
// index tells its listener of the claims its policy rejects.
func (p *publisher) report(key string, names []string) {
	p.mu.Lock()
	old := p.refused[key]
	if len(names) == 0 {
		delete(p.refused, key)
	} else {
		p.refused[key] = slices.Clone(names)
	}
	p.mu.Unlock()
	if p.cfg.Refused == nil {
		return
	}
	for _, name := range names {
		zi := index.ZoneOf(p.cfg.Sources.Zones, name)
		if zi < 0 || slices.Contains(old, name) {
			continue
		}
		p.cfg.Refused(index.Rejection{Zone: p.cfg.Sources.Zones[zi], Name: name, Key: key, Reason: index.ReasonUndelegated})
	}
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
