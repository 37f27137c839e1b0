package main

import (
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// verify asks our server for every name and counts wrong answers.
func verify(s *server, recs []record) (int, error) {
	const workers = 16
	wrong := make([]int, workers)
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			c := &dns.Client{Timeout: 2 * time.Second}
			conn, err := c.Dial(s.addr())
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			m := new(dns.Msg)
			for i := w; i < len(recs); i += workers {
				m.SetQuestion(recs[i].name, dns.TypeA)
				r, _, err := c.ExchangeWithConn(m, conn)
				if err != nil {
					errs <- fmt.Errorf("verifying %s: %w", recs[i].name, err)
					return
				}
				if len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != recs[i].addr.String() {
					if wrong[w] == 0 {
						log.Printf("wrong answer for %s (want %s): %v", recs[i].name, recs[i].addr, r.Answer)
					}
					wrong[w]++
				}
			}
			errs <- nil
		}()
	}
	total := 0
	for range workers {
		if err := <-errs; err != nil {
			return 0, err
		}
	}
	for _, n := range wrong {
		total += n
	}
	return total, nil
}

// publishedLine returns the plugin's log line about its first publication.
func publishedLine(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "published "); i >= 0 && strings.Contains(line, "k8s_gateway") {
			return strings.TrimSpace(line[i:])
		}
	}
	return ""
}
