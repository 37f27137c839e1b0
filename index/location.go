package index

import (
	"fmt"
	"strings"
)

// Location is where a target serves, or where a client asks from: a
// continent code (EU, NA, …), a country code (ISO 3166-1 alpha-2) and a
// region (an ISO 3166-2 subdivision code such as DE-HE, or any code a custom
// MMDB gives, such as a cloud region; see Client.hasRegion). Any part may be empty. Codes compare
// case-insensitively; ParseLocation makes them upper case.
type Location struct {
	Continent, Country, Region string
}

// IsZero reports whether l has no part.
func (l Location) IsZero() bool { return l == Location{} }

// String returns l in the form ParseLocation reads.
func (l Location) String() string {
	var parts []string
	for _, p := range [...]struct{ k, v string }{{"continent", l.Continent}, {"country", l.Country}, {"region", l.Region}} {
		if p.v != "" {
			parts = append(parts, p.k+"="+p.v)
		}
	}
	return strings.Join(parts, ",")
}

// maxCode is the longest code a location part may have.
const maxCode = 63

// ParseLocation reads "continent=EU,country=DE,region=DE-HE" (any subset,
// in any order, separated by commas or spaces).
func ParseLocation(s string) (Location, error) {
	var l Location
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	if len(fields) == 0 {
		return l, fmt.Errorf("empty location; want continent=CODE, country=CODE or region=CODE")
	}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok || !validCode(v) {
			return Location{}, fmt.Errorf("location part %q: want continent=CODE, country=CODE or region=CODE (letters, digits, '-', '_', at most %d)", f, maxCode)
		}
		v = strings.ToUpper(v)
		var part *string
		switch strings.ToLower(k) {
		case "continent":
			part = &l.Continent
		case "country":
			part = &l.Country
		case "region":
			part = &l.Region
		default:
			// The key alone: quoting the part too would quote it twice.
			return Location{}, fmt.Errorf("location part: unknown key %q; want continent, country or region", k)
		}
		if *part != "" && *part != v {
			return Location{}, fmt.Errorf("location %q: %s given twice", s, k)
		}
		*part = v
	}
	return l, nil
}

func validCode(v string) bool {
	if v == "" || len(v) > maxCode {
		return false
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// Client is who asks, for the choice among the targets of a steered name
// (see steer.go). The plugin fills it from the geoip plugin's metadata; it
// is passed by pointer and never retained.
type Client struct {
	// Continent and Country are the client's codes, Regions its
	// subdivision codes, comma-separated (as the geoip plugin gives them);
	// all empty when unknown.
	Continent, Country, Regions string
	// Default is the location answered when no target matches the client's.
	Default Location
	// Draw is a uniformly random number for the weighted choice.
	Draw uint32
	// Located is set by the lookup when the answer depended on the
	// client's location: the reply's ECS scope is then the query's source
	// prefix (RFC 7871 §7.2.1), not 0.
	Located bool
}

// match returns how closely the packed location loc ("CONTINENT|COUNTRY|REGION")
// matches the client: 3 for its region, 2 its country, 1 its continent, 0 not at all.
func (c *Client) match(loc []byte) int {
	cont, country, region := splitLocation(loc)
	switch {
	case len(region) > 0 && c.hasRegion(region) && (len(country) == 0 || c.Country == "" || equalCode(country, c.Country)):
		return 3
	case len(country) > 0 && equalCode(country, c.Country):
		return 2
	case len(cont) > 0 && equalCode(cont, c.Continent):
		return 1
	}
	return 0
}

// hasRegion reports whether the client is in region, a packed code: one of
// its subdivision codes is region, or, for an ISO 3166-2 code (CC-SSS: the
// country, a hyphen, one to three letters or digits), the client is in
// country CC and one of its codes is SSS. GeoLite2 and GeoIP2 store only the
// part after the hyphen ("HE" for DE-HE); a custom MMDB gives its own codes
// whole ("eu-west-1" is not of the ISO form and compares whole only).
func (c *Client) hasRegion(region []byte) bool {
	if hasCode(c.Regions, region) {
		return true
	}
	return len(region) >= 4 && len(region) <= 6 && region[2] == '-' && isAlnum(region[3:]) &&
		equalCode(region[:2], c.Country) && hasCode(c.Regions, region[3:])
}

// isAlnum reports whether b is letters and digits only.
func isAlnum(b []byte) bool {
	for _, ch := range b {
		if !('A' <= ch && ch <= 'Z' || 'a' <= ch && ch <= 'z' || '0' <= ch && ch <= '9') {
			return false
		}
	}
	return true
}

// matchDefault is match against c.Default.
func (c *Client) matchDefault(loc []byte) int {
	cont, country, region := splitLocation(loc)
	d := &c.Default
	switch {
	case len(region) > 0 && equalCode(region, d.Region):
		return 3
	case len(country) > 0 && equalCode(country, d.Country):
		return 2
	case len(cont) > 0 && equalCode(cont, d.Continent):
		return 1
	}
	return 0
}

// packLocation is the form of l in a packed node.
func packLocation(l Location) string {
	if l.IsZero() {
		return ""
	}
	return l.Continent + "|" + l.Country + "|" + l.Region
}

// splitLocation splits a packed location without allocating.
func splitLocation(loc []byte) (cont, country, region []byte) {
	i := indexByte(loc, '|')
	if i < 0 {
		return loc, nil, nil
	}
	cont, loc = loc[:i], loc[i+1:]
	if i = indexByte(loc, '|'); i < 0 {
		return cont, loc, nil
	}
	return cont, loc[:i], loc[i+1:]
}

func indexByte(b []byte, c byte) int {
	for i := range b {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// hasCode reports whether the comma-separated list codes holds code.
func hasCode(codes string, code []byte) bool {
	for len(codes) > 0 {
		i := strings.IndexByte(codes, ',')
		if i < 0 {
			return equalCode(code, codes)
		}
		if equalCode(code, codes[:i]) {
			return true
		}
		codes = codes[i+1:]
	}
	return false
}

// equalCode compares a packed (upper-case) code with one from the client,
// ASCII case-insensitively; an empty client code matches nothing.
func equalCode(packed []byte, s string) bool {
	if len(packed) != len(s) || len(s) == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if packed[i] != c {
			return false
		}
	}
	return true
}
