package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// command is a `go test` command line of one package: the go binary and
// "test", its flags without -run, -skip, -json and -v, and those apart.
// (-json prints what -v does; with -v after it, the test binary would not
// mark its framing lines, and a test's output without a newline would hide
// the --- PASS line after it.)
type command struct {
	goBin     string
	flags     []string
	run, skip string // the -run and -skip patterns; "" for none
	pkg       string
	dir       string   // where it runs; "" for the current directory
	env       []string // its environment; nil for this process's
}

// parseCommand reads `go test [flags] PACKAGE` (the package last, as make
// test's stages write it).
func parseCommand(args []string) (command, error) {
	if len(args) < 3 || args[1] != "test" {
		return command{}, errors.New("want `go test [flags] PACKAGE`")
	}
	c := command{goBin: args[0], pkg: args[len(args)-1]}
	if strings.HasPrefix(c.pkg, "-") {
		return command{}, fmt.Errorf("the last argument %q is not a package", c.pkg)
	}
	rest := args[2 : len(args)-1]
	for i := 0; i < len(rest); i++ {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(rest[i], "-"), "-"), "=")
		if !strings.HasPrefix(rest[i], "-") {
			return command{}, fmt.Errorf("%q: one package only, last", rest[i])
		}
		if !hasValue && !boolFlags[name] && name != "run" && name != "skip" {
			if i+1 == len(rest) {
				return command{}, fmt.Errorf("-%s without a value", name)
			}
			c.flags = append(c.flags, rest[i], rest[i+1])
			i++
			continue
		}
		switch name {
		case "run", "skip":
			if !hasValue {
				if i+1 == len(rest) {
					return command{}, fmt.Errorf("-%s without a pattern", name)
				}
				i++
				value = rest[i]
			}
			if _, err := regexp.Compile(topLevel(value)); err != nil {
				return command{}, fmt.Errorf("-%s %q: %v", name, value, err)
			}
			if name == "run" {
				c.run = value
			} else {
				c.skip = value
			}
		case "json", "v":
		case "args":
			return command{}, errors.New("-args is not supported")
		default:
			c.flags = append(c.flags, rest[i])
		}
	}
	return c, nil
}

// boolFlags are the flags of go test and go build that take no value.
var boolFlags = map[string]bool{
	"a": true, "asan": true, "benchmem": true, "cover": true, "failfast": true, "fullpath": true,
	"json": true, "linkshared": true, "msan": true, "n": true, "race": true, "short": true,
	"trimpath": true, "v": true, "work": true, "x": true, "buildvcs": true, "args": true,
}

// topLevel is the part of a -run or -skip pattern that top-level test names
// are matched against (go test splits patterns at slashes outside brackets
// and parentheses; a pattern of top-level names has none).
func topLevel(pattern string) string {
	depth := 0
	for i, r := range pattern {
		switch r {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case '/':
			if depth == 0 {
				return pattern[:i]
			}
		}
	}
	return pattern
}

// listArgs lists the top-level tests the command would run.
func (c command) listArgs() []string {
	pattern := topLevel(c.run)
	if pattern == "" {
		pattern = "."
	}
	return c.args("-list", pattern)
}

// jsonArgs runs the command with -json.
func (c command) jsonArgs() []string {
	var extra []string
	if c.run != "" {
		extra = append(extra, "-run", c.run)
	}
	return c.args(append(extra, "-json")...)
}

// rerunArgs runs exactly the tests named.
func (c command) rerunArgs(tests []string) []string {
	quoted := make([]string, len(tests))
	for i, t := range tests {
		quoted[i] = regexp.QuoteMeta(t)
	}
	return c.args("-run", "^("+strings.Join(quoted, "|")+")$", "-json")
}

func (c command) args(extra ...string) []string {
	out := append([]string{c.goBin, "test"}, c.flags...)
	out = append(out, extra...)
	if c.skip != "" {
		out = append(out, "-skip", c.skip)
	}
	return append(out, c.pkg)
}

// String is the command as the stage was given it (for the report).
func (c command) String() string {
	args := c.args()
	if c.run != "" {
		args = c.args("-run", c.run)
	}
	return strings.Join(args, " ")
}

// selected filters listed names by the -skip pattern (-list applies only the
// -run one).
func (c command) selected(names []string) []string {
	if c.skip == "" {
		return names
	}
	skip := regexp.MustCompile(topLevel(c.skip))
	var out []string
	for _, n := range names {
		// A pattern with a slash skips subtests only: the test still runs.
		if topLevel(c.skip) != c.skip || !skip.MatchString(n) {
			out = append(out, n)
		}
	}
	return out
}
