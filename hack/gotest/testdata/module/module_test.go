// Package module is the test module of hack/gotest's own tests: what each
// test does is read from GOTEST_PLAN ("TestB=panic-once TestC=fail"; a test
// not named passes), and what TestMain does from GOTEST_MAIN. A behaviour
// ending in -once does it in the first run (no file TestX in GOTEST_STATE
// yet) and passes after.
package module

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.list").Value.String() != "" { // as test/internal/harness.NoTests
		os.Exit(m.Run())
	}
	switch os.Getenv("GOTEST_MAIN") {
	case "exit0": // a TestMain that decides not to run the tests
		fmt.Fprintln(os.Stderr, "module: not running the tests")
		os.Exit(0)
	case "exit1": // a TestMain that fails after the tests
		m.Run()
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func TestA(t *testing.T) { behave(t) }
func TestB(t *testing.T) { behave(t) }
func TestC(t *testing.T) { behave(t) }
func TestD(t *testing.T) { behave(t) }

func TestE(t *testing.T) {
	t.Run("sub", behave)
	behave(t)
}

func behave(t *testing.T) {
	plan := map[string]string{}
	for _, f := range strings.Fields(os.Getenv("GOTEST_PLAN")) {
		name, what, _ := strings.Cut(f, "=")
		plan[name] = what
	}
	what, ok := plan[t.Name()]
	if !ok {
		return
	}
	if before, found := strings.CutSuffix(what, "-once"); found {
		mark := filepath.Join(os.Getenv("GOTEST_STATE"), strings.ReplaceAll(t.Name(), "/", "_"))
		if _, err := os.Stat(mark); err == nil {
			return
		}
		if err := os.WriteFile(mark, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		what = before
	}
	switch what {
	case "fail":
		t.Fatalf("%s fails", t.Name())
	case "skip":
		t.Skipf("%s is skipped", t.Name())
	case "panic":
		panic(t.Name() + " panics")
	case "crash": // a panic in another goroutine: no --- FAIL line
		go func() { panic(t.Name() + " crashes the binary") }()
		time.Sleep(time.Minute)
	case "exit":
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour)
	case "parallel":
		t.Parallel()
		fmt.Print("output without a newline")
	default:
		t.Fatalf("unknown behaviour %q", what)
	}
}
