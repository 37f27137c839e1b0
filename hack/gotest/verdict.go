package main

import (
	"fmt"
	"io"
	"strings"
)

// verdict is a stage's result and what the report names.
type verdict struct {
	cmd     string
	pass    bool
	why     string // why it failed
	listed  int
	passed  int
	flaky   []note   // failed or crashed, then passed when run again
	late    []note   // did not run the first time, then passed (or skipped)
	failed  []note   // did not pass in the end
	skipped []note   // skipped (the first time or when run again), with the reason
	tail    []string // when tests did not run: the binary's last lines outside them
}

// note is a line of the report about one test, and lines of its output
// under it.
type note struct {
	test, text string
	more       []string
}

// stage runs a command as described in main.go's comment.
func stage(c command, max int, out, errOut io.Writer) verdict {
	v := verdict{cmd: c.String()}
	names, err := list(c, errOut)
	if err != nil {
		v.why = "could not list its tests (a build error?): " + err.Error()
		return v
	}
	names = c.selected(names)
	v.listed = len(names)
	if len(names) == 0 {
		v.why = "it selects no test"
		return v
	}
	first := runJSON(c, c.jsonArgs(), out, errOut)
	rerun := v.judgeFirst(names, first, max)
	if len(rerun) == 0 {
		return v
	}
	fmt.Fprintf(out, "==== gotest: running again: %s\n", strings.Join(rerun, " "))
	second := runJSON(c, c.rerunArgs(rerun), out, errOut)
	v.judgeRerun(rerun, first, second)
	return v
}

// judgeFirst sorts the first run's tests; it returns the tests to run
// again, or sets the verdict.
func (v *verdict) judgeFirst(names []string, o outcome, max int) []string {
	var again, bad []string
	for _, n := range names {
		switch o.action[n] {
		case "pass":
			v.passed++
		case "skip":
			v.skipped = append(v.skipped, note{test: n, text: reason(o, n)})
		case "":
			again = append(again, n)
		default: // fail, or run/pause/cont when the binary stopped
			again = append(again, n)
			bad = append(bad, n)
		}
	}
	switch {
	case len(again) == 0 && o.exit == 0:
		v.pass = true
	case len(again) == 0:
		v.why = fmt.Sprintf("go test exited %d although every test passed or skipped (TestMain, a race report, the package's own failure)", o.exit)
	case len(bad) > max:
		v.why = fmt.Sprintf("%d tests failed or crashed, more than K8SGW_RETRY_MAX=%d: not run again", len(bad), max)
		for _, n := range bad {
			v.failed = append(v.failed, note{n, firstRun(o, n), more(o, n)})
		}
	}
	if len(again) > len(bad) {
		v.tail = o.tail
	}
	if v.why != "" {
		return nil
	}
	return again
}

// judgeRerun gives the verdict from the run of the tests that did not pass.
func (v *verdict) judgeRerun(rerun []string, first, second outcome) {
	for _, n := range rerun {
		ran := first.action[n] != ""
		switch a := second.action[n]; {
		case a == "pass" && ran:
			v.passed++
			v.flaky = append(v.flaky, note{test: n, text: firstRun(first, n) + ", then passed when run again"})
		case a == "pass":
			v.passed++
			v.late = append(v.late, note{test: n, text: "did not run (the test binary ended before it), then passed when run again"})
		case a == "skip" && !ran:
			v.skipped = append(v.skipped, note{test: n, text: reason(second, n)})
			v.late = append(v.late, note{test: n, text: "did not run (the test binary ended before it), then skipped when run again"})
		default:
			again := "and again when run again"
			switch a {
			case "skip":
				again = "then skipped when run again"
			case "":
				again = "and did not run when run again"
			case "run", "pause", "cont":
				again = "and when run again " + stopped(second)
			}
			v.failed = append(v.failed, note{n, firstRun(first, n) + ", " + again + lastLine(second, n), more(second, n)})
		}
	}
	v.tail = nil
	for _, n := range rerun {
		if second.action[n] == "" {
			v.tail = second.tail
		}
	}
	switch {
	case len(v.failed) > 0:
		v.why = fmt.Sprintf("%d tests did not pass when run again", len(v.failed))
	case second.exit != 0:
		v.why = fmt.Sprintf("the run of the tests again exited %d", second.exit)
	default:
		v.pass = true
	}
}

// firstRun says what a test did in the first run.
func firstRun(o outcome, n string) string {
	switch o.action[n] {
	case "fail":
		return "failed" + lastLine(o, n)
	case "":
		if o.timedOut {
			return "did not run (the test binary timed out before it)"
		}
		return "did not run (the test binary ended before it)"
	default:
		return stopped(o) + lastLine(o, n)
	}
}

func stopped(o outcome) string {
	if o.timedOut {
		return "was running when the test binary timed out"
	}
	return "was running when the test binary stopped (a panic, os.Exit or a signal)"
}

func lastLine(o outcome, n string) string {
	if l := o.lines[n]; len(l) > 0 {
		return " (" + l[0] + ")"
	}
	return ""
}

// more are the output lines of a failed test after the first (at most 5).
func more(o outcome, n string) []string {
	l := o.lines[n]
	if len(l) > 6 {
		l = l[:6]
	}
	if len(l) > 0 {
		l = l[1:]
	}
	return l
}

func reason(o outcome, n string) string {
	if l := o.lines[n]; len(l) > 0 {
		return l[len(l)-1]
	}
	return "no reason given"
}

// report is the verdict in a few lines: printed last by the stage and
// appended to make test's summary.
func (v verdict) report(name string) string {
	var b strings.Builder
	word := "PASS"
	if !v.pass {
		word = "FAIL"
	}
	fmt.Fprintf(&b, "==== %s %s: %d of %d tests passed, %d skipped", word, name, v.passed, v.listed, len(v.skipped))
	if len(v.flaky) > 0 {
		fmt.Fprintf(&b, ", %d flaky", len(v.flaky))
	}
	if v.why != "" {
		fmt.Fprintf(&b, ": %s", v.why)
	}
	fmt.Fprintf(&b, "\n     (%s)\n", v.cmd)
	if len(v.tail) > 0 && !v.pass {
		fmt.Fprintf(&b, "     tests did not run; the test binary's last lines outside them:\n")
		for _, l := range v.tail {
			fmt.Fprintf(&b, "            | %s\n", l)
		}
	}
	for _, group := range []struct {
		label string
		notes []note
	}{{"FAILED", v.failed}, {"FLAKY", v.flaky}, {"RERUN", v.late}, {"SKIP", v.skipped}} {
		for _, n := range group.notes {
			fmt.Fprintf(&b, "     %-6s %s: %s\n", group.label, n.test, n.text)
			for _, l := range n.more {
				fmt.Fprintf(&b, "            | %s\n", l)
			}
		}
	}
	return b.String()
}
