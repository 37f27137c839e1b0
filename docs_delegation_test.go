package gateway

import (
	"regexp"
	"strings"
	"testing"
)

// One story for delegation in every page: two nameservers, or one with
// its trade-off stated; fixed addresses named after the nameserver where a
// load balancer reports only a hostname; the records of a parent zone that
// is itself a registered domain are in that zone, not at the registrar.
// (The chart's NOTES say the same: TestChartGlueNotes, e2e.)

var (
	nsRecord = regexp.MustCompile(`^\s*(\S+\.)\s+(?:\d+\s+)?(?:IN\s+)?NS\s+\S+`)
	glueLine = regexp.MustCompile(`^\s*\S+\.\s+(?:\d+\s+)?(?:IN\s+)?(?:A|AAAA|DS)\s+\S+`)
)

func TestDocsDelegation(t *testing.T) {
	hostnameLB := regexp.MustCompile(`(?i)reports? (?:only )?a hostname|hostname instead of`)
	delegation := regexp.MustCompile(`(?i)\bglue\b|nameserver|\bNS\b`)
	static := regexp.MustCompile("apexAddresses|`apex [A-Za-z0-9.-]+ [A-Z0-9]|ADDRESS")
	registrar := regexp.MustCompile(`(?i)\bat (?:the|your) registrar\b`)
	parent := regexp.MustCompile("parent zone `([a-z0-9-]+\\.[a-z0-9.-]+)`")
	blocks := 0
	for file, text := range userDocs(t) {
		// Runs of NS, A, AAAA and DS lines, fenced or indented: a
		// delegation; an owner with one NS in one is one nameserver.
		one := ""
		count := map[string]int{}
		flush := func() {
			for owner, n := range count {
				if n == 1 {
					one = owner
				}
			}
			if len(count) > 0 {
				blocks++
			}
			count = map[string]int{}
		}
		for _, line := range strings.Split(text, "\n") {
			switch m := nsRecord.FindStringSubmatch(line); {
			case m != nil:
				count[m[1]]++
			case glueLine.MatchString(line):
			default:
				flush()
			}
		}
		flush()
		if one != "" && !strings.Contains(text, "single point of failure") {
			t.Errorf("%s: delegates %s to one nameserver without saying it is a single point of failure", file, one)
		}
		for _, s := range sentences(text) {
			if registrar.MatchString(s.text) {
				if m := parent.FindStringSubmatch(s.text); m != nil {
					t.Errorf("%s:%d: the records of the parent zone %s are added at the registrar? They go in %s's own zone: %q", file, s.line, m[1], m[1], s.text)
				}
			}
		}
		// A sentence on a load balancer that reports a hostname, which it or
		// the next speaks of glue or nameservers: its section names the fixed
		// addresses.
		for _, sec := range sections(text) {
			ss := sentences(sec)
			for i, s := range ss {
				window := s.text
				if i+1 < len(ss) && !strings.HasPrefix(s.text, "|") {
					window += " " + ss[i+1].text
				}
				if hostnameLB.MatchString(s.text) && delegation.MatchString(window) && !static.MatchString(sec) {
					t.Errorf("%s: %q: a load balancer that reports a hostname, in a delegation, and its section does not name fixed addresses after the nameserver (apexAddresses, apex NAME ADDRESS...)", file, s.text)
				}
			}
		}
	}
	if blocks < 4 {
		t.Errorf("only %d delegations found in the docs: is the check still reading them?", blocks)
	}
}

// sections splits a Markdown text at its headings.
func sections(text string) []string {
	var out []string
	var cur []string
	prose := proseLines(text)
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "#") && prose[i] != "" && len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
		}
		cur = append(cur, l)
	}
	return append(out, strings.Join(cur, "\n"))
}

// paragraphs returns the prose paragraphs and list items of a Markdown
// text, each joined on one line, with the line it starts on.
func paragraphs(text string) []sentence {
	var out []sentence
	var cur []string
	start := 0
	flush := func() {
		if len(cur) > 0 {
			out = append(out, sentence{start, strings.Join(cur, " ")})
		}
		cur = nil
	}
	for i, l := range proseLines(text) {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "#") ||
			strings.HasPrefix(t, "|") || len(t) > 2 && t[0] >= '0' && t[0] <= '9' && strings.HasPrefix(t[1:], ". ") {
			flush()
		}
		if t != "" {
			if len(cur) == 0 {
				start = i + 1
			}
			cur = append(cur, t)
		}
	}
	flush()
	return out
}

// sentences splits the paragraphs of a Markdown text into sentences (after
// '.', '!' or '?' and a space).
func sentences(text string) []sentence {
	var out []sentence
	for _, p := range paragraphs(text) {
		rest := p.text
		for rest != "" {
			cut := len(rest)
			for i := 0; i+1 < len(rest); i++ {
				if strings.ContainsRune(".!?", rune(rest[i])) && rest[i+1] == ' ' {
					cut = i + 1
					break
				}
			}
			out = append(out, sentence{p.line, strings.TrimSpace(rest[:cut])})
			rest = strings.TrimSpace(rest[cut:])
		}
	}
	return out
}

type sentence struct {
	line int
	text string
}
