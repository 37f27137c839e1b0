package harness

import (
	"net/http"
	"time"
)

// WaitOK polls url until it answers 200 OK (a ready or health endpoint),
// every interval, for up to timeout; it reports whether it did.
func WaitOK(url string, interval, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(interval)
	}
	return false
}
