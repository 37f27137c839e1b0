package xfr

import (
	"net"
	"reflect"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/transfer"
)

// targetSet is one `transfer` stanza of the server block: its zones, the
// addresses it notifies (host:port, or "*": none) and the source address of
// its NOTIFY (nil: any).
type targetSet struct {
	zones  []string
	to     []string
	source net.IP
}

// readTargets reads the stanzas of the transfer plugin t. CoreDNS keeps
// them unexported and offers only Notify, which tries the secondaries one
// after another: they are read by reflection, and only if every field has
// the kind CoreDNS 1.15 gives it (TestReadTargets); otherwise ok is false
// and NOTIFY goes through t.Notify.
func readTargets(t *transfer.Transfer) (sets []targetSet, ok bool) {
	if t == nil {
		return nil, false
	}
	xfrs := reflect.ValueOf(t).Elem().FieldByName("xfrs")
	if xfrs.Kind() != reflect.Slice {
		return nil, false
	}
	for i := range xfrs.Len() {
		x := xfrs.Index(i)
		if x.Kind() != reflect.Pointer || x.IsNil() || x.Elem().Kind() != reflect.Struct {
			return nil, false
		}
		x = x.Elem()
		zones, okZ := stringsOf(x.FieldByName("Zones"))
		to, okT := stringsOf(x.FieldByName("to"))
		source, okS := ipOf(x.FieldByName("source"))
		if !okZ || !okT || !okS {
			return nil, false
		}
		sets = append(sets, targetSet{zones: zones, to: to, source: source})
	}
	return sets, true
}

// stringsOf reads a []string.
func stringsOf(v reflect.Value) ([]string, bool) {
	if v.Kind() != reflect.Slice || v.Type().Elem().Kind() != reflect.String {
		return nil, false
	}
	out := make([]string, v.Len())
	for i := range out {
		out[i] = v.Index(i).String()
	}
	return out, true
}

// ipOf reads a net.IP (nil when empty).
func ipOf(v reflect.Value) (net.IP, bool) {
	if v.Kind() != reflect.Slice || v.Type().Elem().Kind() != reflect.Uint8 {
		return nil, false
	}
	if v.Len() == 0 {
		return nil, true
	}
	out := make(net.IP, v.Len())
	for i := range out {
		out[i] = byte(v.Index(i).Uint())
	}
	return out, true
}

// longestMatch returns the stanza whose zone is the longest that holds
// name, as the transfer plugin chooses it; nil when none does.
func longestMatch(sets []targetSet, name string) *targetSet {
	var best *targetSet
	zone := ""
	for i := range sets {
		if z := plugin.Zones(sets[i].zones).Matches(name); z != "" && (len(z) > len(zone) || len(z) == len(zone) && z > zone) {
			zone, best = z, &sets[i]
		}
	}
	return best
}
