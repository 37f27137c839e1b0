package harness

import (
	"fmt"
	"os"
)

// NeedsRoot decides whether a suite (or a test) that needs root runs: as
// root it does, unless the user set skipVar=1 on purpose; then it is
// skipped with the reason returned, which each test reports with t.Skip so
// that the skip is seen (go test prints --- SKIP, hack/gotest.sh lists it
// last). Without root and without skipVar=1 it is an error: a stage that
// cannot run its tests fails, it does not pass with none.
func NeedsRoot(suite, skipVar, why string) (skip string, err error) {
	return needsRoot(os.Geteuid(), os.Getenv(skipVar), suite, skipVar, why)
}

func needsRoot(euid int, skipValue, suite, skipVar, why string) (string, error) {
	switch {
	case skipValue == "1":
		return fmt.Sprintf("%s skipped: %s=1", suite, skipVar), nil
	case skipValue != "":
		return "", fmt.Errorf("%s: %s=%q: set it to 1 to skip, or unset it", suite, skipVar, skipValue)
	case euid != 0:
		return "", fmt.Errorf("%s needs root (%s) and runs as uid %d: run it as root, or set %s=1 to skip it", suite, why, euid, skipVar)
	}
	return "", nil
}
