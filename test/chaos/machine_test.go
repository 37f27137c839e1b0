//go:build chaos

package chaos

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// machine samples the load of the machine while the suite runs, so that the
// report says what the figures were measured on, as a benchmark's does.
type machine struct {
	mu      sync.Mutex
	samples []float64 // one-minute load averages
	start   time.Time
	stop    chan struct{}
	done    chan struct{}
}

func watchMachine() *machine {
	m := &machine{start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			if l, ok := loadAverage(); ok {
				m.mu.Lock()
				m.samples = append(m.samples, l)
				m.mu.Unlock()
			}
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// line stops the sampling and describes the machine and its load.
func (m *machine) line() string {
	close(m.stop)
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	var sum, peak float64
	for _, s := range m.samples {
		sum += s
		peak = max(peak, s)
	}
	load := "load average not read"
	if n := len(m.samples); n > 0 {
		load = fmt.Sprintf("load average (1 min) %.1f mean, %.1f at most over %d samples", sum/float64(n), peak, n)
	}
	return fmt.Sprintf("Machine: %d × %s, %s memory, Linux %s; %s; %s, %s.",
		cpus(), cpuName(), memTotal(), procLine("/proc/sys/kernel/osrelease"), load,
		m.start.UTC().Format("2006-01-02"), time.Since(m.start).Round(time.Second))
}

func loadAverage() (float64, bool) {
	f := strings.Fields(procLine("/proc/loadavg"))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

func procLine(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// cpus counts the machine's CPUs (runtime.NumCPU sees only this process's
// affinity).
func cpus() int {
	return max(strings.Count(procLine("/proc/cpuinfo"), "processor\t:"), 1)
}

func cpuName() string {
	for _, line := range strings.Split(procLine("/proc/cpuinfo"), "\n") {
		if v, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return runtime.GOARCH
}

func memTotal() string {
	for _, line := range strings.Split(procLine("/proc/meminfo"), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kib, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err == nil {
				return fmt.Sprintf("%.0f GiB", kib/(1<<20))
			}
		}
	}
	return "unknown"
}
