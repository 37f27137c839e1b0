package watchtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// What a test of the records that a controller puts into an index asks:
// the index's answer, as the plugin's ServeDNS would give it, in one line.

// rcodes are the rcodes of the index's results, as the plugin answers them.
var rcodes = map[index.Result]string{
	index.Success: "NOERROR", index.NoData: "NOERROR", index.NameError: "NXDOMAIN",
	index.ServerFailure: "SERVFAIL", index.Delegation: "NOERROR",
}

// Answer returns a one-line description of ix's answer to name/qtype: the
// rcode the plugin answers with and the answer and additional sections,
// for comparing with Expect.
func Answer(ix *index.Index, name string, qtype uint16) string {
	s := ix.Snapshot()
	zi := s.Zone(dns.Fqdn(name))
	if zi < 0 {
		return "REFUSED (no zone)"
	}
	answer, _, extra, res := s.Lookup(zi, dns.Fqdn(name), qtype)
	return format(rcodes[res], testutil.Strings(answer), testutil.Strings(extra))
}

// Expect builds what Answer returns for rcode, answer and additional records.
func Expect(t testing.TB, rcode string, answer []string, extra ...string) string {
	t.Helper()
	return format(rcode, testutil.Want(t, answer...), testutil.Want(t, extra...))
}

func format(rcode string, answer, extra []string) string {
	return fmt.Sprintf("%s answer=[%s] extra=[%s]", rcode, strings.Join(answer, " | "), strings.Join(extra, " | "))
}

// NX is what Answer gives for a name that does not exist.
const NX = "NXDOMAIN answer=[] extra=[]"

// Answers polls until ix answers name/qtype as want.
func Answers(t testing.TB, ix *index.Index, name string, qtype uint16, want string) {
	t.Helper()
	testutil.Eventually(t, name+" "+dns.TypeToString[qtype], func() string {
		if got := Answer(ix, name, qtype); got != want {
			return "got " + got + ", want " + want
		}
		return ""
	})
}
