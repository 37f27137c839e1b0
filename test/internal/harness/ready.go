package harness

import (
	"net/http"
	"time"
)

// WaitOK polls url until it answers 200 OK (a ready or health endpoint),
// every interval, for up to timeout; it reports whether it did. Each request
// gets a second at most, so that one connection that hangs does not use up
// the whole wait.
func WaitOK(url string, interval, timeout time.Duration) bool {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(interval)
	}
	return false
}
