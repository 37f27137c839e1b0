package harness

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServer runs a stand-in for coredns (a shell script that prints its
// arguments and waits for a signal) through a start, a signal, a stop and a
// second start.
func TestServer(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "coredns")
	script := "#!/bin/sh\ntrap 'echo hup' HUP\ntrap 'echo term; exit 0' TERM\necho \"run $RUN $*\"\nwhile :; do sleep 0.05; done\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ready" {
			http.NotFound(w, r)
		}
	}))
	defer ready.Close()
	s := &Server{Binary: bin, Corefile: "/Corefile", Env: []string{"RUN=1", "PATH=" + os.Getenv("PATH")}, ReadyURL: ready.URL + "/ready"}
	if s.Running() || s.Pid() != 0 || s.Output() != "" {
		t.Fatalf("before Start: running %v, pid %d, output %q", s.Running(), s.Pid(), s.Output())
	}
	if err := s.Signal(syscall.SIGHUP); err == nil {
		t.Error("Signal with nothing running: no error")
	}
	s.Stop()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if err := s.WaitReady(10*time.Millisecond, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if !s.Running() || s.Pid() == 0 {
		t.Fatalf("after Start: running %v, pid %d", s.Running(), s.Pid())
	}
	waitOutput(t, s, "run 1 -conf /Corefile\n")
	if err := s.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, s, "hup\n")
	s.Stop()
	if s.Running() || s.Pid() != 0 || !strings.HasSuffix(s.Output(), "term\n") {
		t.Fatalf("after Stop: running %v, pid %d, output %q", s.Running(), s.Pid(), s.Output())
	}
	s.Env[0] = "RUN=2"
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, s, "run 2 -conf /Corefile\n") // the latest run's output only
	if strings.Contains(s.Output(), "run 1") {
		t.Errorf("output of the second run holds the first's: %q", s.Output())
	}

	s.ReadyURL = ready.URL + "/missing"
	if err := s.WaitReady(10*time.Millisecond, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "run 2") {
		t.Errorf("WaitReady on a server that is not ready: %v, want an error with its output", err)
	}
}

func waitOutput(t *testing.T, s *Server, want string) {
	t.Helper()
	for range 200 {
		if strings.Contains(s.Output(), want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("output %q does not hold %q", s.Output(), want)
}

// TestMetric sums the samples of one metric whose labels match.
func TestMetric(t *testing.T) {
	text := `# HELP requests_total requests
requests_total{verb="list",kind="Service"} 2
requests_total{verb="watch",kind="Service"} 3
requests_total{verb="list",kind="Ingress"} 5
requests_total_other{verb="list"} 100
plain 7
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(text)) }))
	defer srv.Close()
	for _, c := range []struct {
		name    string
		filters []string
		want    float64
	}{
		{"requests_total", nil, 10},
		{"requests_total", []string{`verb="list"`}, 7},
		{"requests_total", []string{`verb="list"`, `kind="Service"`}, 2},
		{"requests_total", []string{`verb="get"`}, 0},
		{"plain", nil, 7},
	} {
		if got, err := Metric(srv.URL, c.name, c.filters...); err != nil || got != c.want {
			t.Errorf("Metric(%s, %q) = %v, %v, want %v", c.name, c.filters, got, err, c.want)
		}
	}
	if _, err := ProcMemory(os.Getpid(), "VmRSS"); err != nil {
		t.Errorf("ProcMemory of this process: %v", err)
	}
	if _, err := ProcMemory(os.Getpid(), "NoSuchField"); err == nil {
		t.Error("ProcMemory of a missing field: no error")
	}
}
