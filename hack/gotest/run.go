package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"regexp"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action string
	Test   string
	Output string
}

// outcome is what one run of a test binary reported of its top-level tests.
type outcome struct {
	exit     int               // the command's exit status; -1 when it could not start
	action   map[string]string // top-level test -> its last action: run, pause, cont, pass, fail, skip
	lines    map[string][]string
	timedOut bool     // the binary (or go test, for a TestMain) reported the -timeout
	tail     []string // the last lines of output outside any test (TestMain's)
}

// errorLine is a line that t.Errorf, t.Fatalf, t.Skipf or t.Log wrote
// (file:line at the start of an indented line).
var errorLine = regexp.MustCompile(`^\s+[\w./-]+\.go:\d+: `)

// maxLines bounds the error lines kept per test.
const maxLines = 20

// runJSON runs args (a `go test -json` command), writes the tests' output
// to out as text, the command's stderr to errOut, and returns what the
// tests reported.
func runJSON(c command, args []string, out, errOut io.Writer) outcome {
	o := outcome{action: map[string]string{}, lines: map[string][]string{}}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = c.dir, c.env
	cmd.Stderr = errOut
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		io.WriteString(errOut, "gotest: "+err.Error()+"\n")
		o.exit = -1
		return o
	}
	o.read(stdout, out)
	o.exit = exitStatus(cmd.Wait())
	return o
}

// read decodes a -json stream; lines that are not events are copied as they are.
func (o *outcome) read(r io.Reader, out io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if !bytes.HasPrefix(line, []byte("{")) || json.Unmarshal(line, &e) != nil {
			out.Write(append(line, '\n'))
			continue
		}
		io.WriteString(out, e.Output)
		o.note(e)
	}
}

func (o *outcome) note(e event) {
	if strings.HasPrefix(e.Output, "panic: test timed out after ") || strings.Contains(e.Output, "Test killed with quit: ran too long") {
		o.timedOut = true
	}
	if e.Test == "" {
		if l := strings.TrimSpace(e.Output); e.Action == "output" && l != "" {
			o.tail = append(o.tail, l)
			if len(o.tail) > 5 {
				o.tail = o.tail[1:]
			}
		}
		return
	}
	top, _, _ := strings.Cut(e.Test, "/")
	switch {
	case e.Action == "output":
		if errorLine.MatchString(e.Output) || strings.HasPrefix(e.Output, "panic: ") {
			if l := o.lines[top]; len(l) < maxLines {
				o.lines[top] = append(l, strings.TrimSpace(e.Output))
			}
		}
	case top == e.Test:
		o.action[e.Test] = e.Action
	}
}

func exitStatus(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	default:
		return -1
	}
}

// list runs a `go test -list` command and returns the names it lists, or
// its output and exit status when it fails (a build error).
func list(c command, errOut io.Writer) ([]string, error) {
	args := c.listArgs()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = c.dir, c.env
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, errOut
	if err := cmd.Run(); err != nil {
		errOut.Write(stdout.Bytes())
		return nil, err
	}
	return listed(stdout.String()), nil
}

// listNames are the lines of -list output that name a test, an example or
// a fuzz target (the binary runs fuzz targets' seeds as tests).
var listName = regexp.MustCompile(`^(Test|Example|Fuzz)\w*$`)

func listed(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if listName.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}
