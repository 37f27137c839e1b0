package acmeupdate

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// docsAnswers returns the table "what | answer" of docs/features/certificates.md.
func docsAnswers(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../docs/features/certificates.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if strings.HasPrefix(line, "| ") && len(cells) == 2 {
			rows[cells[0]] = cells[1]
		}
	}
	return rows
}

// TestDocsAnswers: the answers docs/features/certificates.md gives, rcode and
// signature, are the Updater's: each row below is sent and its reply
// compared with the page's.
func TestDocsAnswers(t *testing.T) {
	rows := docsAnswers(t)
	add := func(m *dns.Msg) { m.Insert([]dns.RR{txt(t, challengeA, 60, acmeValue)}) }
	cases := []struct {
		row   string
		build func(m *dns.Msg)
		key   string // keyA unless "none", "unknown" or "badsecret"
		at    time.Duration
		setup func(u *Updater, s *memStore) // before; the message is sent twice with replay
		twice bool
	}{
		{row: "no TSIG", build: add, key: "none"},
		{row: "unknown key, or an algorithm other than the key's", build: add, key: "unknown"},
		{row: "wrong MAC", build: add, key: "badsecret"},
		{row: "time signed outside the fudge", build: add, at: -time.Hour},
		{row: "the same signed message again (a replay)", build: add, twice: true},
		{row: "over 4 KiB, more than 16 prerequisites or 16 updates, more than two additional records", build: func(m *dns.Msg) {
			for i := range 17 {
				m.Insert([]dns.RR{txt(t, challengeA, 60, "v"+fmtInt(i))})
			}
		}},
		{row: "zone section not one SOA record; malformed prerequisite or update", build: func(m *dns.Msg) {
			add(m)
			m.Question[0].Qtype = dns.TypeA
		}},
		{row: "an update record of another class than IN, NONE or ANY", build: func(m *dns.Msg) {
			add(m)
			m.Ns[0].Header().Class = dns.ClassCHAOS // Insert gives the zone's class
		}},
		{row: "zone not one of the block's", build: func(m *dns.Msg) {
			add(m)
			m.Question[0].Name = "example.org."
		}},
		{row: "prerequisite or update outside the zone", build: func(m *dns.Msg) {
			m.Insert([]dns.RR{txt(t, "_acme-challenge.example.org.", 60, acmeValue)})
		}},
		{row: "outside the scope above; over a limit or the key's rate; the name belongs to another namespace", build: func(m *dns.Msg) {
			m.Insert([]dns.RR{mustRR(t, "_acme-challenge.team-a.example.com. 60 IN A 192.0.2.1")})
		}},
		{row: "the API server refused the write", build: add, setup: func(_ *Updater, s *memStore) { s.fail = errors.New("forbidden") }},
		{row: "under `first` or `delegated`, a kind or a cluster that ownership reads is not completely read yet", build: add,
			setup: func(u *Updater, _ *memStore) { u.cfg.Authorizer = &incompleteAuth{} }},
	}
	for _, c := range cases {
		answer, ok := rows[c.row]
		if !ok {
			t.Errorf("docs/features/certificates.md has no row %q", c.row)
			continue
		}
		u, store, _ := testUpdater(t, nil)
		if c.setup != nil {
			c.setup(u, store)
		}
		m := updateMsg(testZone)
		c.build(m)
		at := time.Now().Add(c.at)
		var wire []byte
		switch c.key {
		case "none":
			var err error
			if wire, err = m.Pack(); err != nil {
				t.Fatal(err)
			}
		case "unknown":
			wire, _ = signed(t, m, "nobody.", dns.HmacSHA256, secretA, at)
		case "badsecret":
			wire, _ = signed(t, m, keyA, dns.HmacSHA256, secretB, at)
		default:
			wire, _ = signed(t, m, keyA, dns.HmacSHA256, secretA, at)
		}
		reply, _ := serve(t, u, wire)
		if c.twice {
			reply, _ = serve(t, u, wire)
		}
		got := dns.RcodeToString[reply.Rcode]
		want := strings.FieldsFunc(answer, func(r rune) bool { return r == ',' || r == ':' || r == ' ' })[0]
		if got != want {
			t.Errorf("%q: the page says %q, the reply is %s", c.row, answer, got)
		}
		// A BADKEY or BADSIG reply carries a TSIG without a MAC (RFC 8945 §5.3.2).
		switch signedReply := reply.IsTsig() != nil && reply.IsTsig().MACSize > 0; {
		case strings.Contains(answer, "(unsigned") && signedReply:
			t.Errorf("%q: the page says unsigned, the reply is signed", c.row)
		case strings.Contains(answer, "(signed") && !signedReply:
			t.Errorf("%q: the page says signed, the reply is not", c.row)
		}
	}
}

// TestDocsUpdatePort: the chart's values, its README, SECURITY.md and the
// Certificates page give the same UPDATE port, the chart's acme.port, and
// the chart README does not send updates to the DNS port.
func TestDocsUpdatePort(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile("../" + path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	values := read("charts/k8s-gateway/values.yaml")
	m := regexp.MustCompile(`(?s)\nacme:\n.*?\n  port: (\d+)\n`).FindStringSubmatch(values)
	if m == nil {
		t.Fatal("values.yaml: no acme.port")
	}
	port := m[1]
	mention := regexp.MustCompile("`acme\\.port`[^0-9`]{0,6}([0-9]+)")
	for _, path := range []string{"charts/k8s-gateway/README.md", "SECURITY.md", "docs/features/certificates.md"} {
		text := read(path)
		found := mention.FindAllStringSubmatch(text, -1)
		if len(found) == 0 {
			t.Errorf("%s does not give the UPDATE port (`acme.port` and its number)", path)
		}
		for _, f := range found {
			if f[1] != port {
				t.Errorf("%s gives the UPDATE port as %s (%q); values.yaml's acme.port is %s", path, f[1], f[0], port)
			}
		}
		if strings.Contains(text, "Updates arrive on the DNS port") {
			t.Errorf("%s sends updates to the DNS port", path)
		}
	}
	if !strings.Contains(read("charts/k8s-gateway/README.md"), "| `acme.port` | `"+port+"` |") {
		t.Errorf("the chart README's values table does not give acme.port's default %s", port)
	}
}
