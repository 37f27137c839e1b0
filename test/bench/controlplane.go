package main

import (
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// controlPlane is the local etcd, kube-apiserver and kube-controller-manager.
type controlPlane struct{ pids []int }

// findControlPlane reads the PIDs hack/cluster.sh recorded in dir, or, with
// no dir, looks the processes up by name.
func findControlPlane(dir string) *controlPlane {
	cp := &controlPlane{}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		var out []byte
		if dir != "" {
			out, _ = os.ReadFile(filepath.Join(dir, name+".pid"))
		} else {
			out, _ = exec.Command("pgrep", "-x", name[:min(len(name), 15)]).Output() // comm is 15 bytes
		}
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil {
				cp.pids = append(cp.pids, pid)
			}
		}
	}
	return cp
}

// pin moves the control plane to cpu, so that it does not take the
// servers' CPU during the churn runs.
func (cp *controlPlane) pin(cpu string) {
	for _, pid := range cp.pids {
		if err := exec.Command("taskset", "-a", "-p", "-c", cpu, strconv.Itoa(pid)).Run(); err != nil {
			log.Printf("pinning control plane process %d: %v", pid, err)
		}
	}
}

// while runs f with the control plane stopped, so that its background work
// does not take dnsperf's CPU, then lets it catch up. Runs last seconds, far
// below client-go's 30 s idle and 15 s ping timeouts.
func (cp *controlPlane) while(f func() error) error {
	if cp == nil {
		return f()
	}
	cp.pause()
	err := f()
	cp.resume()
	time.Sleep(catchUp)
	return err
}

func (cp *controlPlane) pause() { cp.signal(syscall.SIGSTOP) }

func (cp *controlPlane) resume() { cp.signal(syscall.SIGCONT) }

func (cp *controlPlane) signal(sig syscall.Signal) {
	if cp == nil {
		return
	}
	for _, pid := range cp.pids {
		syscall.Kill(pid, sig)
	}
}
