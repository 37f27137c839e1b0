//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestACMEAnswerTable: the table of answers of docs/features/certificates.md is this
// test's table. Each row is read from the page, each of its cases is sent to
// the running server, and the reply must be what the row says: its rcode
// (a row naming several gives one per case, in order), its TSIG error, and
// whether the reply is signed ("(signed)", "(unsigned"). A row without cases
// here fails, so the page cannot promise an answer no test observes.
func TestACMEAnswerTable(t *testing.T) {
	a := acmeSetup(t)
	s, k := a.s, a.coreA
	zone := a.zone
	fresh := func(label string) string { return "_acme-challenge." + label + "." + a.domainA + "." }
	add := func(m *dns.Msg, name string, ttl uint32, value string) *dns.Msg {
		m.Insert([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: ttl}, Txt: []string{value}}})
		return m
	}
	update := func() *dns.Msg {
		m := new(dns.Msg)
		m.SetUpdate(zone)
		return m
	}
	sign := func(m *dns.Msg, key tsigKey, at time.Time) []byte {
		m.SetTsig(key.name, dns.CanonicalName(key.alg), 300, at.Unix())
		wire, _, err := dns.TsigGenerate(m, key.secret, "", false)
		if err != nil {
			t.Fatal(err)
		}
		return wire
	}
	signed := func(m *dns.Msg) []byte { return sign(m, k, time.Now()) }
	// prereq is an update with one prerequisite (RFC 2136 §2.4) and an
	// add: "used" (name in use), "unused" (name not in use), "exists TYPE",
	// "absent TYPE" or "equals TYPE DATA".
	prereq := func(name, what string) *dns.Msg {
		m := update()
		f := strings.Fields(what)
		switch f[0] {
		case "used":
			m.NameUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: name}}})
		case "unused":
			m.NameNotUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: name}}})
		case "exists":
			m.RRsetUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: name, Rrtype: dns.StringToType[f[1]]}}})
		case "absent":
			m.RRsetNotUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: name, Rrtype: dns.StringToType[f[1]]}}})
		case "equals":
			r, err := dns.NewRR(name + " 0 IN " + f[1] + " " + f[2])
			if err != nil {
				t.Fatal(err)
			}
			m.Used([]dns.RR{r})
		}
		return add(m, fresh("prereq"), 60, "v")
	}
	www := "www." + a.domainA + "."
	claimingService(t, a.nsB, "web", "www."+a.domainB, "192.0.2.20") // team-b owns it
	waitFor(t, 10*time.Second, func() bool {
		r, err := s.query("www."+a.domainB, dns.TypeA)
		return err == nil && len(r.Answer) == 1
	})

	type tc struct {
		name  string
		index int // which rcode of the row
		wire  func(t *testing.T) []byte
		setup func(t *testing.T) *server // another server to send it to
		log   string                     // a reason the server must log
	}
	cases := map[string][]tc{
		"no TSIG": {{name: "unsigned add", wire: func(t *testing.T) []byte {
			b, err := add(update(), fresh("unsigned"), 60, "v").Pack()
			if err != nil {
				t.Fatal(err)
			}
			return b
		}}},
		"unknown key, or an algorithm other than the key's": {
			{name: "unknown key", wire: func(t *testing.T) []byte {
				return sign(add(update(), fresh("badkey"), 60, "v"), tsigKey{name: "nobody.example.", alg: "hmac-sha256", secret: newSecret(t)}, time.Now())
			}},
			{name: "another algorithm", wire: func(t *testing.T) []byte {
				return sign(add(update(), fresh("badalg"), 60, "v"), tsigKey{name: k.name, alg: "hmac-sha512", secret: k.secret}, time.Now())
			}},
		},
		"wrong MAC": {{name: "another secret", wire: func(t *testing.T) []byte {
			return sign(add(update(), fresh("badsig"), 60, "v"), tsigKey{name: k.name, alg: k.alg, secret: newSecret(t)}, time.Now())
		}}},
		"time signed outside the fudge": {{name: "an hour ago", wire: func(t *testing.T) []byte {
			return sign(add(update(), fresh("badtime"), 60, "v"), k, time.Now().Add(-time.Hour))
		}}},
		"the same signed message again (a replay)": {{name: "sent twice", wire: func(t *testing.T) []byte {
			wire := signed(add(update(), fresh("replay"), 60, "v"))
			if _, r := exchangeUpdate(t, s, wire); r.Rcode != dns.RcodeSuccess {
				t.Fatalf("the first time: %s", dns.RcodeToString[r.Rcode])
			}
			return wire
		}}},
		"over 4 KiB, more than 16 prerequisites or 16 updates, more than two additional records": {
			{name: "over 4 KiB", wire: func(t *testing.T) []byte {
				m := update()
				for i := range 18 {
					add(m, fresh("big"+strconv.Itoa(i)), 60, strings.Repeat("x", 250))
				}
				return signed(m)
			}},
			{name: "17 prerequisites", wire: func(t *testing.T) []byte {
				m := update()
				for i := range 17 {
					m.NameUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: fmt.Sprintf("p%d.%s.", i, a.domainA)}}})
				}
				return signed(add(m, fresh("prereqs"), 60, "v"))
			}},
			{name: "17 updates", wire: func(t *testing.T) []byte {
				m := update()
				for i := range 17 {
					add(m, fresh("many"), 60, "v"+strconv.Itoa(i))
				}
				return signed(m)
			}},
			{name: "three additional records", wire: func(t *testing.T) []byte {
				m := add(update(), fresh("extra"), 60, "v")
				m.SetEdns0(1232, false)
				r, _ := dns.NewRR("x." + zone + " 60 IN A 192.0.2.1")
				m.Extra = append(m.Extra, r)
				return signed(m)
			}},
		},
		"zone section not one SOA record; malformed prerequisite or update": {
			{name: "no zone", wire: func(t *testing.T) []byte {
				m := &dns.Msg{MsgHdr: dns.MsgHdr{Id: dns.Id(), Opcode: dns.OpcodeUpdate}}
				return signed(m)
			}},
			{name: "two zones", wire: func(t *testing.T) []byte {
				m := update()
				m.Question = append(m.Question, m.Question[0])
				return signed(m)
			}},
			{name: "a zone of type A", wire: func(t *testing.T) []byte {
				m := update()
				m.Question[0].Qtype = dns.TypeA
				return signed(m)
			}},
			{name: "a prerequisite with a TTL", wire: func(t *testing.T) []byte {
				m := prereq(www, "exists A")
				m.Answer[0].Header().Ttl = 60
				return signed(m)
			}},
			{name: "a delete of an RRset with a TTL", wire: func(t *testing.T) []byte {
				m := update()
				m.Ns = append(m.Ns, &dns.ANY{Hdr: dns.RR_Header{Name: fresh("del"), Rrtype: dns.TypeTXT, Class: dns.ClassANY, Ttl: 60}})
				return signed(m)
			}},
		},
		"an update record of another class than IN, NONE or ANY": {{name: "class CHAOS", wire: func(t *testing.T) []byte {
			m := add(update(), fresh("chaos"), 60, "v")
			m.Ns[0].Header().Class = dns.ClassCHAOS
			return signed(m)
		}}},
		"zone not one of the block's": {{name: "example.org", wire: func(t *testing.T) []byte {
			m := new(dns.Msg)
			m.SetUpdate("example.org.")
			return signed(add(m, "_acme-challenge.example.org.", 60, "v"))
		}}},
		"prerequisite or update outside the zone": {
			{name: "a prerequisite outside", wire: func(t *testing.T) []byte { return signed(prereq("www.example.org.", "used")) }},
			{name: "an update outside", wire: func(t *testing.T) []byte {
				return signed(add(update(), "_acme-challenge.example.org.", 60, "v"))
			}},
		},
		"name in use / not in use; RRset exists / does not exist / differs": {
			{name: "name in use", index: 0, wire: func(t *testing.T) []byte { return signed(prereq(www, "unused")) }},
			{name: "name not in use", index: 1, wire: func(t *testing.T) []byte { return signed(prereq("nope."+a.domainA+".", "used")) }},
			{name: "RRset exists", index: 2, wire: func(t *testing.T) []byte { return signed(prereq(www, "absent A")) }},
			{name: "RRset does not exist", index: 3, wire: func(t *testing.T) []byte { return signed(prereq(www, "exists AAAA")) }},
			{name: "RRset differs", index: 3, wire: func(t *testing.T) []byte { return signed(prereq(www, "equals A 192.0.2.99")) }},
		},
		"outside the scope above; over a limit or the key's rate; the name belongs to another namespace": {
			{name: "an A record", wire: func(t *testing.T) []byte {
				m := update()
				r, _ := dns.NewRR(fresh("a") + " 60 IN A 192.0.2.1")
				m.Insert([]dns.RR{r})
				return signed(m)
			}},
			{name: "a TXT record at another name", wire: func(t *testing.T) []byte {
				return signed(add(update(), "other."+a.domainA+".", 60, "v"))
			}},
			{name: "a TTL over maxttl", wire: func(t *testing.T) []byte { return signed(add(update(), fresh("ttl"), 3600, "v")) }},
			{name: "a name team-b owns", wire: func(t *testing.T) []byte {
				return signed(add(update(), "_acme-challenge.www."+a.domainB+".", 60, "v"))
			}},
			{name: "over the key's rate", wire: func(t *testing.T) []byte {
				// rate 600 a minute (Corefile.acme), a bucket per namespace
				// that every verified message draws on: messages that fail a
				// prerequisite (no write) as fast as one client sends them
				// empty it; then one more is refused.
				for i := range 5000 {
					if _, r := exchangeUpdate(t, s, signed(prereq(fmt.Sprintf("nope%d.%s.", i, a.domainA), "used"))); r.Rcode == dns.RcodeRefused {
						break
					}
				}
				return signed(prereq("nope."+a.domainA+".", "used"))
			}},
		},
		"the API server refused the write": {{
			name: "no create on DNSEndpoints",
			log:  "storage",
			setup: func(t *testing.T) *server {
				return acmeServerAs(t, a, "acme-no-create", `[{apiGroups: ["*"], resources: ["*"], verbs: [get, list, watch]},
  {apiGroups: ["", events.k8s.io], resources: [events], verbs: [create, patch]}]`)
			},
			wire: func(t *testing.T) []byte { return signed(add(update(), fresh("nowrite"), 60, "v")) },
		}},
		"under `first` or `delegated`, a kind or a cluster that ownership reads is not completely read yet": {{
			name: "Ingress forbidden to the server",
			setup: func(t *testing.T) *server {
				return acmeServerAs(t, a, "acme-no-ingress", `[{apiGroups: ["", externaldns.k8s.io, gateway.networking.k8s.io,
  gateway.networking.x-k8s.io, discovery.k8s.io, events.k8s.io], resources: ["*"], verbs: [get, list, watch, create, update, patch, delete]}]`)
			},
			wire: func(t *testing.T) []byte { return signed(add(update(), fresh("incomplete"), 60, "v")) },
		}},
	}

	rows := answerTable(t, filepath.Join(repoRoot, "docs/features/certificates.md"))
	// The rate case spends the key's rate: it runs last.
	const last = "outside the scope above; over a limit or the key's rate; the name belongs to another namespace"
	var order []answerRow
	for _, r := range rows {
		if r.what != last {
			order = append(order, r)
		}
	}
	for _, r := range rows {
		if r.what == last {
			order = append(order, r)
		}
	}
	for _, row := range order {
		list, ok := cases[row.what]
		if !ok {
			t.Errorf("docs/features/certificates.md: no case of this test sends %q", row.what)
			continue
		}
		for _, c := range list {
			t.Run(row.what+"/"+c.name, func(t *testing.T) {
				to := s
				if c.setup != nil {
					to = c.setup(t)
				}
				want := row.rcodes[min(c.index, len(row.rcodes)-1)]
				_, r := exchangeUpdate(t, to, c.wire(t))
				rt := r.IsTsig()
				got := fmt.Sprintf("%s, TSIG error %s, signed %v", dns.RcodeToString[r.Rcode], tsigError(rt), rt != nil && rt.MAC != "")
				t.Logf("observed: %s", got)
				if r.Rcode != want {
					t.Errorf("%s; the page says %s", got, row.answer)
				}
				if row.tsigError != 0 && (rt == nil || int(rt.Error) != row.tsigError) {
					t.Errorf("%s; the page says TSIG error %s", got, dns.RcodeToString[row.tsigError])
				}
				if row.signed != nil && (rt != nil && rt.MAC != "") != *row.signed {
					t.Errorf("%s; the page says %s", got, row.answer)
				}
				if c.log != "" {
					want := "(" + dns.RcodeToString[r.Rcode] + ", " + c.log + ")"
					waitFor(t, 5*time.Second, func() bool { return strings.Contains(to.output(), want) })
				}
			})
		}
	}
}

func tsigError(rt *dns.TSIG) string {
	if rt == nil {
		return "none (no TSIG)"
	}
	return dns.RcodeToString[int(rt.Error)]
}

// answerRow is a row of a "| what | answer |" table.
type answerRow struct {
	what, answer string
	rcodes       []int
	tsigError    int   // 0 for none said
	signed       *bool // nil when the row does not say
}

// answerTable reads the "| what | answer |" table of a page. An answer
// starts with its rcodes (several, comma-separated, for several cases),
// may name a TSIG error (BADKEY, BADSIG, BADTIME) and says "(signed)" or
// "(unsigned...)".
func answerTable(t *testing.T, page string) []answerRow {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n| what | answer |\n| --- | --- |\n")
	if !ok {
		t.Fatalf("%s: no table | what | answer |", page)
	}
	word := regexp.MustCompile(`\b[A-Z]{6,8}\b`)
	var rows []answerRow
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 4 {
			break
		}
		r := answerRow{what: strings.TrimSpace(cells[1]), answer: strings.TrimSpace(cells[2])}
		head, _, _ := strings.Cut(r.answer, "(")
		head, _, _ = strings.Cut(head, ":")
		for _, w := range word.FindAllString(head, -1) {
			switch v, ok := dns.StringToRcode[w]; {
			case !ok:
			case v >= dns.RcodeBadSig:
				r.tsigError = v
			default:
				r.rcodes = append(r.rcodes, v)
			}
		}
		switch {
		case strings.Contains(r.answer, "(signed)"):
			yes := true
			r.signed = &yes
		case strings.Contains(r.answer, "(unsigned"):
			no := false
			r.signed = &no
		}
		if len(r.rcodes) == 0 {
			t.Fatalf("%s: the row %q names no rcode", page, line)
		}
		rows = append(rows, r)
	}
	if len(rows) < 10 {
		t.Fatalf("%s: %d rows in the answer table", page, len(rows))
	}
	return rows
}

// acmeServerAs starts a second server of a's Corefile as a ServiceAccount
// sa with only the RBAC rules given (a YAML list).
func acmeServerAs(t *testing.T, a acme, sa, rules string) *server {
	t.Helper()
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: ServiceAccount
metadata: {name: %[2]s, namespace: %[1]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s-%[2]s}
rules: %[3]s
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s-%[2]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s-%[2]s}
subjects: [{kind: ServiceAccount, name: %[2]s, namespace: %[1]s}]
`, a.nsA, sa, rules), "apply", "-f", "-")
	t.Cleanup(func() { kubectlErr("", "delete", "clusterrole,clusterrolebinding", a.nsA+"-"+sa) })
	var env []string
	for _, e := range a.env {
		switch {
		case strings.HasPrefix(e, "ACME_UPDATE_PORT="):
			e = "ACME_UPDATE_PORT=" + strconv.Itoa(freePort(t))
		case strings.HasPrefix(e, "ACME_METRICS_PORT="):
			e = "ACME_METRICS_PORT=" + strconv.Itoa(freePort(t))
		}
		env = append(env, e)
	}
	return startServer(t, "test/e2e/testdata/Corefile.acme", tokenKubeconfig(t, a.nsA, sa), env...)
}
