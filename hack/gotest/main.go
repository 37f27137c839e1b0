// Command gotest runs one `go test` stage of make test (hack/gotest.sh) and
// gives it a verdict that cannot be green on tests that did not run:
//
//   - It lists the top-level tests the command selects (`go test -list`,
//     with the command's -run and -skip), runs the command with -json, and
//     prints the tests' output as `go test -v` would.
//   - Every listed test must report PASS or SKIP. A test that failed, that
//     was running when the test binary stopped (a panic, os.Exit, the
//     timeout), or that never ran, is run again, all of them in one run.
//     The stage passes only if each of them passes then (a test that never
//     ran the first time may also skip) and that run exits 0; the ones that
//     failed first are reported FLAKY. More than K8SGW_RETRY_MAX (3) tests
//     that failed or crashed fail the stage at once.
//   - A command that exits non-zero although every test passed fails.
//   - The verdict, each flaky test, each test run again and each skipped
//     test with its reason are printed last and appended to the file
//     K8SGW_TEST_SUMMARY names (make test prints it at the very end).
//
// Usage: go run ./hack/gotest go test [flags] PACKAGE
package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
)

func main() {
	max := 3
	if v := os.Getenv("K8SGW_RETRY_MAX"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "gotest: K8SGW_RETRY_MAX=%q: not a count\n", v)
			os.Exit(2)
		}
		max = n
	}
	cmd, err := parseCommand(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotest:", err)
		fmt.Fprintln(os.Stderr, "usage: go run ./hack/gotest go test [flags] PACKAGE")
		os.Exit(2)
	}
	name := os.Getenv("K8SGW_STAGE")
	if name == "" {
		name = cmd.pkg
	}
	v := stage(cmd, max, os.Stdout, os.Stderr)
	report := v.report(name)
	fmt.Print(report)
	if path := os.Getenv("K8SGW_TEST_SUMMARY"); path != "" {
		if err := appendFile(path, report); err != nil {
			fmt.Fprintln(os.Stderr, "gotest:", err)
		}
	}
	if !v.pass {
		os.Exit(1)
	}
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
