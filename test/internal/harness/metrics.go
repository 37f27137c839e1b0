package harness

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Metric scrapes the Prometheus text at url and sums the samples of the
// metric name (with labels or without) whose line contains every filter
// (a label, `verb="list"`).
func Metric(url, name string, filters ...string) (float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	sum := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, f := range filters {
			ok = ok && strings.Contains(line, f)
		}
		if !ok {
			continue
		}
		f := strings.Fields(line)
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		sum += v
	}
	return sum, nil
}

// ProcMemory returns a memory field of /proc/PID/status (VmRSS, VmHWM, ...)
// in bytes.
func ProcMemory(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(field) + `:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10, nil
}
