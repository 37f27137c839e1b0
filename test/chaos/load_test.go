//go:build chaos

package chaos

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Targets from API server back (the change written) to the change answered.
const (
	targetP99 = 2 * time.Second
	targetMax = 5 * time.Second
	// lostAfter: a change not answered by then is lost.
	lostAfter = 30 * time.Second
)

// Load: workers × rate, bounded by the scenario and by maxQueries.
const (
	workers    = 4
	workerRate = 50 // queries per second per worker
	maxQueries = 200_000
)

// change is one write whose answer the load waits for.
type change struct {
	name, value string
	made        time.Time
	answered    time.Time
}

// load queries a set of names steadily and classifies every answer against
// what each name has ever been meant to answer.
type load struct {
	addr string
	mu   sync.Mutex
	// history of each name's answers, oldest first; the last is current.
	// "NXDOMAIN" for a name that does not exist.
	history map[string][]string
	names   []string
	changes []*change
	// maxDelay is the longest a change may take (targetMax unless set);
	// a scenario with its own bound is left out of the suite's p99.
	maxDelay                                             time.Duration
	sent, right, stale, wrong, servfail, timeouts, other int
	wrongSeen                                            []string

	stop chan struct{}
	wg   sync.WaitGroup
}

func newLoad(addr string) *load {
	return &load{addr: addr, history: map[string][]string{}, stop: make(chan struct{})}
}

// expect sets the answer a name has from now on; made is when the API
// server acknowledged the write (zero for the initial state).
func (l *load) expect(name, value string, made time.Time) {
	l.allow(name, value)
	if !made.IsZero() {
		l.track(name, value, made)
	}
}

// allow makes value the name's current answer, before the write that
// makes it so: the plugin may answer it before the write returns.
func (l *load) allow(name, value string) {
	name = dns.Fqdn(name)
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.history[name]; !ok {
		l.names = append(l.names, name)
	}
	l.history[name] = append(l.history[name], value)
}

// track waits for the answer of a write acknowledged at made.
func (l *load) track(name, value string, made time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.changes = append(l.changes, &change{name: dns.Fqdn(name), value: value, made: made})
}

func (l *load) start() {
	for w := range workers {
		l.wg.Add(1)
		go l.work(w)
	}
}

func (l *load) work(w int) {
	defer l.wg.Done()
	c := &dns.Client{Timeout: time.Second}
	tick := time.NewTicker(time.Second / workerRate)
	defer tick.Stop()
	for i := w; ; i += workers {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		l.mu.Lock()
		if len(l.names) == 0 || l.sent >= maxQueries {
			l.mu.Unlock()
			continue
		}
		name := l.names[i%len(l.names)]
		l.sent++
		l.mu.Unlock()
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		in, _, err := c.Exchange(m, l.addr)
		l.classify(name, in, err)
	}
}

func (l *load) classify(name string, in *dns.Msg, err error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.timeouts++
		return
	}
	var got string
	switch in.Rcode {
	case dns.RcodeServerFailure:
		l.servfail++
		return
	case dns.RcodeNameError:
		got = "NXDOMAIN"
	case dns.RcodeSuccess:
		var ips []string
		for _, rr := range in.Answer {
			if a, ok := rr.(*dns.A); ok {
				ips = append(ips, a.A.String())
			}
		}
		slices.Sort(ips)
		got = strings.Join(ips, ",")
		if got == "" {
			got = "NODATA"
		}
	default:
		l.other++
		l.wrongSeen = append(l.wrongSeen, fmt.Sprintf("%s: rcode %s", name, dns.RcodeToString[in.Rcode]))
		return
	}
	h := l.history[name]
	switch {
	case got == h[len(h)-1]:
		l.right++
		for _, c := range l.changes {
			if c.name == name && c.value == got && c.answered.IsZero() {
				c.answered = now
			}
		}
	case slices.Contains(h, got):
		l.stale++
	default:
		l.wrong++
		if len(l.wrongSeen) < 10 {
			l.wrongSeen = append(l.wrongSeen, fmt.Sprintf("%s: %s, want one of %q", name, got, h))
		}
	}
}

// waitChanges waits until every change is answered, or lostAfter.
func (l *load) waitChanges() {
	deadline := time.Now().Add(lostAfter)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		done := !slices.ContainsFunc(l.changes, func(c *change) bool { return c.answered.IsZero() })
		l.mu.Unlock()
		if done {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (l *load) finish() {
	close(l.stop)
	l.wg.Wait()
}

// result is one scenario's line of the report.
type result struct {
	scenario                                      string
	sent, right, stale, wrong, servfail, timeouts int
	changes, lost                                 int
	p50, p99, max                                 time.Duration
	lists, watches                                float64 // API requests during the scenario
	notes                                         string
	delays                                        []time.Duration
}

var (
	reportMu sync.Mutex
	report   []result
	// machineLine says what the suite ran on and the machine's load then.
	machineLine string
	allDelay    []time.Duration
)

// summarize ends the load, checks the scenario against the targets and adds
// its line to the report.
func (l *load) summarize(t *testing.T, notes string, allowServfail bool) result {
	t.Helper()
	l.waitChanges()
	l.finish()
	l.mu.Lock()
	defer l.mu.Unlock()
	r := result{scenario: t.Name(), sent: l.sent, right: l.right, stale: l.stale, wrong: l.wrong + l.other,
		servfail: l.servfail, timeouts: l.timeouts, changes: len(l.changes), notes: notes}
	for _, c := range l.changes {
		if c.answered.IsZero() {
			r.lost++
			t.Errorf("change %s → %s made at %s never answered", c.name, c.value, c.made.Format(time.StampMilli))
			continue
		}
		r.delays = append(r.delays, max(c.answered.Sub(c.made), 0)) // answered before made: at once
	}
	slices.Sort(r.delays)
	if n := len(r.delays); n > 0 {
		r.p50 = r.delays[n/2]
		r.p99 = r.delays[int(math.Ceil(0.99*float64(n)))-1]
		r.max = r.delays[n-1]
	}
	if r.wrong > 0 {
		t.Errorf("%d wrong answers: %q", r.wrong, l.wrongSeen)
	}
	limit := targetMax
	if l.maxDelay > 0 {
		limit = l.maxDelay
	}
	if r.max > limit {
		t.Errorf("slowest change answered after %s, target %s", r.max, limit)
	}
	if r.servfail > 0 && !allowServfail {
		t.Errorf("%d SERVFAIL answers", r.servfail)
	}
	reportMu.Lock()
	report = append(report, r)
	if l.maxDelay == 0 {
		allDelay = append(allDelay, r.delays...)
	}
	reportMu.Unlock()
	t.Logf("sent %d, right %d, stale %d, wrong %d, SERVFAIL %d, timeouts %d; %d changes answered after p50 %s, max %s",
		r.sent, r.right, r.stale, r.wrong, r.servfail, r.timeouts, len(r.delays), r.p50, r.max)
	return r
}

// checkTargets checks the p99 over every change of the suite.
func checkTargets(t *testing.T) {
	reportMu.Lock()
	defer reportMu.Unlock()
	d := slices.Sorted(slices.Values(allDelay))
	if len(d) == 0 {
		t.Skip("no changes measured")
	}
	p99 := d[int(math.Ceil(0.99*float64(len(d))))-1]
	t.Logf("%d changes: p50 %s, p99 %s, max %s", len(d), d[len(d)/2], p99, d[len(d)-1])
	if p99 > targetP99 {
		t.Errorf("p99 %s over the target %s", p99, targetP99)
	}
}

func printReport(w io.Writer) {
	reportMu.Lock()
	defer reportMu.Unlock()
	fmt.Fprintln(w, "| scenario | queries | right | stale | wrong | SERVFAIL | timeouts | changes | p50 | max | list/watch calls | notes |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
	for _, r := range report {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %d | %s | %s | %.0f / %.0f | %s |\n",
			strings.TrimPrefix(r.scenario, "TestChaos/"), r.sent, r.right, r.stale, r.wrong, r.servfail, r.timeouts,
			r.changes-r.lost, ms(r.p50), ms(r.max), r.lists, r.watches, r.notes)
	}
	if machineLine != "" {
		fmt.Fprintf(w, "\n%s\n", machineLine)
	}
	d := slices.Sorted(slices.Values(allDelay))
	if len(d) > 0 {
		fmt.Fprintf(w, "\nAll %d changes: p50 %s, p99 %s, max %s.\n", len(d), ms(d[len(d)/2]),
			ms(d[int(math.Ceil(0.99*float64(len(d))))-1]), ms(d[len(d)-1]))
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
