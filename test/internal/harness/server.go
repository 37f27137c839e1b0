package harness

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Server is a coredns binary that a test starts, stops and starts again with
// one Corefile and one environment: the process of the current run, and the
// output of the latest. Its methods are safe to call from several goroutines.
type Server struct {
	Binary   string   // the coredns binary
	Corefile string   // the path of the Corefile it runs with (-conf)
	Args     []string // further arguments, after -conf Corefile
	Env      []string // its environment
	ReadyURL string   // the ready plugin's URL, which WaitReady polls

	mu   sync.Mutex
	proc *Process // the current run; nil while stopped
	last *Process // the latest run, for its output
}

// Start runs the binary; it does not wait for readiness.
func (s *Server) Start() error {
	cmd := exec.Command(s.Binary, append([]string{"-conf", s.Corefile}, s.Args...)...)
	cmd.Env = s.Env
	proc, err := Start(cmd)
	if err != nil {
		return fmt.Errorf("starting coredns: %w", err)
	}
	s.mu.Lock()
	s.proc, s.last = proc, proc
	s.mu.Unlock()
	return nil
}

// WaitReady polls ReadyURL every interval until it answers 200 OK; after
// timeout it returns an error with the server's output.
func (s *Server) WaitReady(interval, timeout time.Duration) error {
	if WaitOK(s.ReadyURL, interval, timeout) {
		return nil
	}
	return fmt.Errorf("coredns not ready after %s:\n%s", timeout, s.Output())
}

// Stop stops the current run (SIGTERM, SIGKILL after 10 s), if any, and
// returns once it has ended.
func (s *Server) Stop() {
	s.mu.Lock()
	proc := s.proc
	s.proc = nil
	s.mu.Unlock()
	if proc != nil {
		proc.Stop(10 * time.Second)
	}
}

// Output is what the latest run printed, stdout and stderr.
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		return ""
	}
	return s.last.Out.String()
}

// Running reports whether a run was started and has not ended (a crash
// ends it) nor been stopped.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && !s.proc.Exited()
}

// Pid is the process ID of the current run, 0 while stopped.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.Cmd.Process.Pid
}

// Signal sends sig to the current run; it fails when none runs.
func (s *Server) Signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return errors.New("coredns is not running")
	}
	return s.proc.Cmd.Process.Signal(sig)
}
