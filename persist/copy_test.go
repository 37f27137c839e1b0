package persist

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// Tests of the file format of the copies (copy.go).

// ptWritten is the write time of the copies of the tests.
var ptWritten = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// ptObjects are the records of the copies of the tests: a wildcard, a CNAME,
// TXT with spaces and quotes, SRV, a delegation with glue.
var ptObjects = map[string][]string{
	"Service/a/web": {"web.example.com. 60 IN A 192.0.2.1", "web.example.com. 60 IN AAAA 2001:db8::1"},
	"Ingress/a/app": {"*.apps.example.com. 60 IN A 192.0.2.2", "www.example.com. 30 IN CNAME lb.example.net."},
	"DNSEndpoint/a/txt": {`txt.example.com. 60 IN TXT "v=spf1 -all" "a \"quoted\" one"`,
		"_https._tcp.web.example.com. 60 IN SRV 0 0 443 web.example.com.",
		"sub.example.com. 60 IN NS ns.sub.example.com.", "ns.sub.example.com. 60 IN A 192.0.2.53"},
}

// ptWriteCopy writes the copy of zone zi of ix to dir as the writer does,
// and returns its path.
func ptWriteCopy(t *testing.T, ix *index.Index, dir string, zi int) string {
	t.Helper()
	s := ix.Snapshot()
	zone := s.Zones()[zi]
	path := Path(dir, zone)
	records := append(append([]dns.RR{}, s.NS(zi)...), s.Records(zi)...)
	if err := Write(path, zone, s.SOA(zi)[0].(*dns.SOA), records, ptWritten); err != nil {
		t.Fatal(err)
	}
	return path
}

// inOrder returns the presentation form of each record, in order.
func inOrder(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = rr.String()
	}
	return out
}

// ptResum returns data with its checksum line replaced by a correct one.
func ptResum(data []byte) []byte {
	trimmed := bytes.TrimSuffix(data, []byte("\n"))
	body := data[:bytes.LastIndexByte(trimmed, '\n')+1]
	return fmt.Appendf(bytes.Clone(body), "; sha256 %x\n", sha256.Sum256(body))
}

func TestRoundTrip(t *testing.T) {
	ix, _ := ptIndex(t, []string{"example.com."}, ptObjects)
	dir := t.TempDir()
	path := ptWriteCopy(t, ix, dir, 0)
	if filepath.Base(path) != "example.com.zone" {
		t.Errorf("file name %s, want example.com.zone", filepath.Base(path))
	}
	c, err := readCopy(path, "example.com.")
	if err != nil {
		t.Fatal(err)
	}
	s := ix.Snapshot()
	if c.Serial != s.Serial(0) || c.SOA.Serial != s.Serial(0) || !c.Written.Equal(ptWritten) {
		t.Errorf("serial %d (SOA %d) written %s, want %d at %s", c.Serial, c.SOA.Serial, c.Written, s.Serial(0), ptWritten)
	}
	// The file is the zone transfer, SOA first, without the closing SOA.
	axfr := append(append(s.SOA(0)[:1:1], s.NS(0)...), s.Records(0)...)
	got := inOrder(append(append([]dns.RR{c.SOA}, c.NS...), c.Records...))
	if want := inOrder(axfr); !slices.Equal(got, want) {
		t.Errorf("read back:\n%s\nwant the AXFR:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", info.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the copy alone", len(entries))
	}
	if serial, err := SerialOf(path); err != nil || serial != s.Serial(0) {
		t.Errorf("copySerial = %d, %v; want %d", serial, err, s.Serial(0))
	}
	// The zone file is a zone file: the reverse zone's name is escaped.
	if p := Path(dir, "0/25.2.0.192.in-addr.arpa."); filepath.Base(p) != "0%2F25.2.0.192.in-addr.arpa.zone" || filepath.Dir(p) != dir {
		t.Errorf("copyPath of a classless reverse zone: %s", p)
	}
}

func TestRejects(t *testing.T) {
	ix, _ := ptIndex(t, []string{"example.com."}, ptObjects)
	good, err := os.ReadFile(ptWriteCopy(t, ix, t.TempDir(), 0))
	if err != nil {
		t.Fatal(err)
	}
	serial := fmt.Sprint(ix.Snapshot().Serial(0))
	lines := strings.SplitAfter(string(good), "\n")
	tests := []struct {
		name string
		data []byte
		want string // in the error
	}{
		{"empty", nil, "truncated"},
		{"cut in half", good[:len(good)/2], "truncated"},
		{"last newline missing", good[:len(good)-1], "truncated"},
		{"checksum line cut", good[:len(good)-10], "truncated"},
		{"checksum line short", append(bytes.Clone(good[:len(good)-10]), '\n'), "bad checksum line"},
		{"checksum line missing", []byte(strings.Join(lines[:len(lines)-2], "")), "truncated"},
		{"a record missing", []byte(strings.Join(slices.Delete(slices.Clone(lines), 4, 5), "")), "checksum mismatch"},
		{"a byte changed", bytes.Replace(good, []byte("192.0.2.1"), []byte("192.0.2.9"), 1), "checksum mismatch"},
		{"the serial changed", bytes.Replace(good, []byte("serial "+serial), []byte("serial 1"), 1), "checksum mismatch"},
		{"another zone's copy", ptResum(bytes.Replace(good, []byte("zone example.com. "), []byte("zone example.org. "), 1)), "not a copy of zone example.com."},
		{"a bad time", ptResum(bytes.Replace(good, []byte("2026-11-23T12:00:00Z"), []byte("noon"), 1)), "bad write time"},
		{"header and SOA serials differ", ptResum(bytes.Replace(good, []byte("; serial "+serial), []byte("; serial 7"), 1)), "differs from the header's 7"},
		{"no SOA first", ptResum([]byte(strings.Join(slices.Delete(slices.Clone(lines), 2, 3), ""))), "not the SOA"},
		{"a second SOA", ptResum([]byte(strings.Join(slices.Insert(slices.Clone(lines), 4, lines[2]), ""))), "a second SOA"},
		{"no apex NS", ptResum([]byte(strings.Join(slices.Delete(slices.Clone(lines), 3, 4), ""))), "no apex NS"},
		{"a record outside the zone", ptResum([]byte(strings.Join(slices.Insert(slices.Clone(lines), 4, "www.example.org.\t60\tIN\tA\t192.0.2.1\n"), ""))), "outside the zone"},
		{"a record of another class", ptResum([]byte(strings.Join(slices.Insert(slices.Clone(lines), 4, "www.example.com.\t60\tCH\tA\t192.0.2.1\n"), ""))), "class is not IN"},
		{"a record that does not parse", ptResum([]byte(strings.Join(slices.Insert(slices.Clone(lines), 4, "www.example.com.\t60\tIN\tA\t999.0.2.1\n"), ""))), "bad A"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "example.com.zone")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := readCopy(path, "example.com.")
			if err == nil {
				t.Fatalf("accepted: serial %d, %d records", c.Serial, len(c.Records))
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
	if _, err := readCopy(filepath.Join(dir, "none.zone"), "example.com."); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}

// TestPersistWriteFailure: a failed write leaves the old copy in place and no
// temporary file behind.
func TestWriteFailure(t *testing.T) {
	ix, _ := ptIndex(t, []string{"example.com."}, ptObjects)
	dir := t.TempDir()
	path := ptWriteCopy(t, ix, dir, 0)
	before, _ := os.ReadFile(path)
	// A directory in the way of the rename.
	blocked := Path(dir, "example.org.")
	if err := os.Mkdir(blocked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(blocked, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	soa := testutil.RR("example.org. 60 IN SOA ns.example.org. hostmaster.example.org. 1 300 60 604800 60").(*dns.SOA)
	if err := Write(blocked, "example.org.", soa, testutil.RRs("example.org. 60 IN NS ns.example.org."), ptWritten); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("the directory holds %d entries, want the copy and the directory", len(entries))
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the copy changed")
	}
}

func TestCheckPersistDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := CheckDir(dir); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Fatalf("created %v, %v; want an empty directory", entries, err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	if err := CheckDir(file); err == nil {
		t.Error("a file accepted as the directory")
	}
}
