package harness

import (
	"os/exec"
	"syscall"
	"time"
)

// Process is a daemon a test started (coredns, BIND, Knot...), with what it
// writes to stdout and stderr collected.
type Process struct {
	Cmd  *exec.Cmd
	Out  Buffer
	done chan struct{}
}

// Start starts cmd, collecting its output.
func Start(cmd *exec.Cmd) (*Process, error) {
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &p.Out, &p.Out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { cmd.Wait(); close(p.done) }()
	return p, nil
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM, and SIGKILL when the process is still running after
// grace; it returns once the process has ended.
func (p *Process) Stop(grace time.Duration) {
	p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Cmd.Process.Kill()
		<-p.done
	}
}
