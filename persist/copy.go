package persist

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// The persist option keeps a last-known-good copy of every zone on disk: a
// zone file of the records a zone transfer sends (apex SOA first, then the
// apex NS and every other record), between a header and a checksum:
//
//	; k8s_gateway copy of zone example.com. (persist option); a checksum guards it, do not edit
//	; serial 1763899200 written 2026-11-23T12:00:00Z
//	example.com.	60	IN	SOA	dns1.kube-system.example.com. hostmaster.example.com. 1763899200 300 60 604800 60
//	...
//	; sha256 <hex digest of every byte above this line>
//
// A file that was cut short or changed fails its checksum and is rejected.

// zoneCopy is one zone read from its file.
type zoneCopy struct {
	Serial  uint32
	Written time.Time
	SOA     *dns.SOA
	NS      []dns.RR // the apex NS RRset
	Records []dns.RR // every other record
}

// expires returns when the copy stops being served: the SOA expire after it was written.
func (c *zoneCopy) expires() time.Time {
	return c.Written.Add(time.Duration(c.SOA.Expire) * time.Second)
}

const (
	copyHeader   = "; k8s_gateway copy of zone %s (persist option); a checksum guards it, do not edit\n"
	copyStamp    = "; serial %d written %s\n"
	copyChecksum = "; sha256 "
)

// Path returns the file of zone in dir: the zone's name without its
// final dot (escaped as a path segment) and ".zone".
func Path(dir, zone string) string {
	return filepath.Join(dir, url.PathEscape(strings.TrimSuffix(zone, "."))+".zone")
}

// Write writes the copy of zone to path atomically: a temporary file
// in the same directory, synced to disk, renamed over path, then the
// directory synced. soa is the apex SOA; records follow it.
func Write(path, zone string, soa *dns.SOA, records []dns.RR, written time.Time) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10)
	sum := sha256.New()
	w := io.MultiWriter(bw, sum)
	fmt.Fprintf(w, copyHeader, zone)
	fmt.Fprintf(w, copyStamp, soa.Serial, written.UTC().Format(time.RFC3339))
	io.WriteString(w, soa.String()+"\n")
	for _, rr := range records {
		io.WriteString(w, rr.String()+"\n")
	}
	fmt.Fprintf(bw, "%s%x\n", copyChecksum, sum.Sum(nil))
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// readCopy reads and checks the copy of zone at path. A missing file
// gives an error that wraps fs.ErrNotExist.
func readCopy(path, zone string) (*zoneCopy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	body, err := verifyCopy(data)
	if err != nil {
		return nil, err
	}
	c := &zoneCopy{}
	header, rest, _ := bytes.Cut(body, []byte("\n"))
	stamp, _, _ := bytes.Cut(rest, []byte("\n"))
	if string(header)+"\n" != fmt.Sprintf(copyHeader, zone) {
		return nil, fmt.Errorf("not a copy of zone %s: header %q", zone, header)
	}
	var when string
	if _, err := fmt.Sscanf(string(stamp), strings.TrimSuffix(copyStamp, "\n"), &c.Serial, &when); err != nil {
		return nil, fmt.Errorf("bad serial and time line %q: %v", stamp, err)
	}
	if c.Written, err = time.Parse(time.RFC3339, when); err != nil {
		return nil, fmt.Errorf("bad write time %q: %v", when, err)
	}
	zp := dns.NewZoneParser(bytes.NewReader(body), zone, path)
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		h := rr.Header()
		switch {
		case h.Class != dns.ClassINET:
			return nil, fmt.Errorf("record %q: class is not IN", rr)
		case !dns.IsSubDomain(zone, h.Name):
			return nil, fmt.Errorf("record %q: outside the zone", rr)
		case c.SOA == nil:
			soa, ok := rr.(*dns.SOA)
			if !ok || h.Name != zone {
				return nil, fmt.Errorf("first record %q: not the SOA of %s", rr, zone)
			}
			if soa.Serial != c.Serial {
				return nil, fmt.Errorf("SOA serial %d differs from the header's %d", soa.Serial, c.Serial)
			}
			c.SOA = soa
		case h.Rrtype == dns.TypeSOA:
			return nil, fmt.Errorf("record %q: a second SOA", rr)
		case h.Rrtype == dns.TypeNS && h.Name == zone:
			c.NS = append(c.NS, rr)
		default:
			c.Records = append(c.Records, rr)
		}
	}
	if err := zp.Err(); err != nil {
		return nil, err
	}
	if c.SOA == nil {
		return nil, errors.New("no SOA record")
	}
	if len(c.NS) == 0 {
		return nil, errors.New("no apex NS records")
	}
	return c, nil
}

// verifyCopy checks the checksum line that ends data and returns what it covers.
func verifyCopy(data []byte) ([]byte, error) {
	trimmed, ok := bytes.CutSuffix(data, []byte("\n"))
	i := bytes.LastIndexByte(trimmed, '\n')
	if !ok || i < 0 || !bytes.HasPrefix(trimmed[i+1:], []byte(copyChecksum)) {
		return nil, errors.New("truncated: the file does not end with its checksum line")
	}
	body, line := data[:i+1], trimmed[i+1+len(copyChecksum):]
	want, err := hex.DecodeString(string(line))
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("bad checksum line %q", trimmed[i+1:])
	}
	if got := sha256.Sum256(body); !bytes.Equal(got[:], want) {
		return nil, fmt.Errorf("checksum mismatch (sha256 %x, the file says %x): corrupt or changed", got, want)
	}
	return body, nil
}

// SerialOf returns the serial in the header of the copy at path, without
// reading the rest of the file.
func SerialOf(path string) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, 2048))
	if _, err := r.ReadString('\n'); err != nil {
		return 0, err
	}
	stamp, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	var serial uint32
	var when string
	if _, err := fmt.Sscanf(strings.TrimSuffix(stamp, "\n"), strings.TrimSuffix(copyStamp, "\n"), &serial, &when); err != nil {
		return 0, err
	}
	return serial, nil
}

// CheckDir creates dir if needed and makes sure a copy can be written there.
func CheckDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".k8s_gateway-probe-*")
	if err != nil {
		return fmt.Errorf("%s is not writable: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
