package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStage runs the stages of testdata/module, whose tests pass, fail,
// panic, crash the binary, hang or skip as each case's plan says, and
// checks the verdict: which tests pass in the end, which are flaky, which
// ran only the second time, which fail. The old gotest.sh (rerun only the
// tests that printed --- FAIL) passed the cases marked old: true although
// they fail.
func TestStage(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs("testdata/module")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		plan, main  string
		flags       []string
		max         int
		pass        bool
		why         string // in the verdict's reason
		listed      int
		flaky, late []string
		failed      []string
		skipped     []string
		old         bool // the old gotest.sh passed it
	}{
		{name: "passes", plan: "TestC=skip TestE/sub=skip", pass: true, listed: 5, skipped: []string{"TestC"}},
		{name: "flaky", plan: "TestB=fail-once", pass: true, listed: 5, flaky: []string{"TestB"}},
		{name: "a flaky subtest", plan: "TestE/sub=fail-once", pass: true, listed: 5, flaky: []string{"TestE"}},
		{name: "parallel and flaky", plan: "TestA=parallel TestB=parallel TestC=fail-once", pass: true, listed: 5, flaky: []string{"TestC"}},
		{name: "fails twice", plan: "TestB=fail", listed: 5, failed: []string{"TestB"}, why: "did not pass when run again"},
		{name: "crashes the binary on the first run", plan: "TestB=crash-once", pass: true, listed: 5,
			flaky: []string{"TestB"}, late: []string{"TestC", "TestD", "TestE"}},
		{name: "exits on the first run; a later test fails", plan: "TestB=exit-once TestD=fail", listed: 5,
			flaky: []string{"TestB"}, late: []string{"TestC", "TestE"}, failed: []string{"TestD"}},
		{name: "panics on the first run", plan: "TestB=panic-once", pass: true, listed: 5,
			flaky: []string{"TestB"}, late: []string{"TestC", "TestD", "TestE"}},
		{name: "panics on the first run; a later test fails", plan: "TestB=panic-once TestD=fail", listed: 5,
			flaky: []string{"TestB"}, late: []string{"TestC", "TestE"}, failed: []string{"TestD"}, old: true},
		{name: "times out after one flaky failure", plan: "TestA=fail-once TestC=hang", listed: 5,
			flaky: []string{"TestA"}, failed: []string{"TestC", "TestD", "TestE"}, old: true},
		{name: "more failures than the retry max", plan: "TestA=fail-once TestB=fail-once TestC=fail-once TestD=fail-once",
			max: 3, listed: 5, failed: []string{"TestA", "TestB", "TestC", "TestD"}, why: "more than K8SGW_RETRY_MAX=3"},
		{name: "TestMain runs no test", main: "exit0", listed: 5,
			failed: []string{"TestA", "TestB", "TestC", "TestD", "TestE"}, old: true},
		{name: "TestMain fails after the tests", main: "exit1", listed: 5, why: "exited 1 although every test passed"},
		{name: "-run", plan: "TestC=fail", flags: []string{"-run", "^Test[AB]$"}, pass: true, listed: 2},
		{name: "-skip", plan: "TestC=fail", flags: []string{"-skip=TestC"}, pass: true, listed: 4},
		{name: "selects no test", flags: []string{"-run", "^TestZ$"}, why: "selects no test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{goBin, "test", "-count=1", "-timeout=5s", "-v"}, tc.flags...)
			c, err := parseCommand(append(args, "."))
			if err != nil {
				t.Fatal(err)
			}
			c.dir = dir
			c.env = append(os.Environ(), "GOTEST_PLAN="+tc.plan, "GOTEST_MAIN="+tc.main, "GOTEST_STATE="+t.TempDir(),
				"GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
			max := tc.max
			if max == 0 {
				max = 5
			}
			var out, errOut bytes.Buffer
			v := stage(c, max, &out, &errOut)
			report := v.report(tc.name)
			t.Logf("report:\n%s", report)
			if v.pass != tc.pass || !strings.Contains(v.why, tc.why) {
				t.Errorf("pass %v (%s), want %v (%q)\noutput:\n%s\n%s", v.pass, v.why, tc.pass, tc.why, out.String(), errOut.String())
			}
			if v.listed != tc.listed {
				t.Errorf("listed %d tests, want %d", v.listed, tc.listed)
			}
			for _, check := range []struct {
				what      string
				got, want []note
				wantNames []string
			}{
				{"flaky", v.flaky, nil, tc.flaky},
				{"run only the second time", v.late, nil, tc.late},
				{"failed", v.failed, nil, tc.failed},
				{"skipped", v.skipped, nil, tc.skipped},
			} {
				var got []string
				for _, n := range check.got {
					got = append(got, n.test)
					if !strings.Contains(report, n.test+": ") {
						t.Errorf("the report does not name %s", n.test)
					}
				}
				if !slices.Equal(got, check.wantNames) {
					t.Errorf("%s: %v, want %v", check.what, got, check.wantNames)
				}
			}
			word := "==== FAIL "
			if tc.pass {
				word = "==== PASS "
			}
			if !strings.HasPrefix(report, word+tc.name+":") {
				t.Errorf("the report does not start with %q", word+tc.name)
			}
		})
	}
}

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		list, json string
		rerun      string
		err        bool
	}{
		{args: []string{"go", "test", "-tags", "e2e", "-count=1", "-timeout", "60m", "-v", "./test/e2e"},
			list:  "go test -tags e2e -count=1 -timeout 60m -list . ./test/e2e",
			json:  "go test -tags e2e -count=1 -timeout 60m -json ./test/e2e",
			rerun: "go test -tags e2e -count=1 -timeout 60m -run ^(TestA|TestB)$ -json ./test/e2e"},
		{args: []string{"go", "test", "-v", "-run", "^TestBareMetal$", "-skip=TestX/y", "./test/e2e"},
			list:  "go test -list ^TestBareMetal$ -skip TestX/y ./test/e2e",
			json:  "go test -run ^TestBareMetal$ -json -skip TestX/y ./test/e2e",
			rerun: "go test -run ^(TestA|TestB)$ -json -skip TestX/y ./test/e2e"},
		{args: []string{"go", "test", "--run=TestA/sub", "./x"},
			list:  "go test -list TestA ./x",
			json:  "go test -run TestA/sub -json ./x",
			rerun: "go test -run ^(TestA|TestB)$ -json ./x"},
		{args: []string{"go", "vet", "./x"}, err: true},
		{args: []string{"go", "test", "-v"}, err: true},
		{args: []string{"go", "test", "./x", "./y"}, err: true},
		{args: []string{"go", "test", "-run"}, err: true},
		{args: []string{"go", "test", "-run", "(", "./x"}, err: true},
		{args: []string{"go", "test", "-args", "-x", "./x"}, err: true},
	} {
		c, err := parseCommand(tc.args)
		if (err != nil) != tc.err {
			t.Errorf("%q: error %v, want one: %v", tc.args, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		for _, got := range []struct{ what, got, want string }{
			{"list", strings.Join(c.listArgs(), " "), tc.list},
			{"json", strings.Join(c.jsonArgs(), " "), tc.json},
			{"rerun", strings.Join(c.rerunArgs([]string{"TestA", "TestB"}), " "), tc.rerun},
		} {
			if got.got != got.want {
				t.Errorf("%q: %s: %s, want %s", tc.args, got.what, got.got, got.want)
			}
		}
	}
}

func TestSelected(t *testing.T) {
	names := []string{"TestA", "TestB", "TestAB"}
	for _, tc := range []struct {
		skip string
		want []string
	}{
		{"", names},
		{"^TestA$", []string{"TestB", "TestAB"}},
		{"A", []string{"TestB"}},
		{"TestA/sub", names},
	} {
		c := command{skip: tc.skip}
		if got := c.selected(names); !slices.Equal(got, tc.want) {
			t.Errorf("-skip %q: %v, want %v", tc.skip, got, tc.want)
		}
	}
}

func TestListed(t *testing.T) {
	out := "module: a line\nTestA\nTesting\nExampleX\nFuzzY\nBenchmarkZ\nok  \tx\t0.1s\n"
	if got, want := listed(out), []string{"TestA", "Testing", "ExampleX", "FuzzY"}; !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
}
