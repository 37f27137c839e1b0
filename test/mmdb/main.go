// Command mmdb writes a small database for the tests of traffic steering,
// with MaxMind's writer library, in the form of GeoLite2-City and
// GeoIP2-City: each argument NETWORK=LOCATION maps a network to a continent,
// a country and its subdivisions, as those databases store them and the
// geoip plugin reads them (continent.code, country.iso_code,
// subdivisions[].iso_code, each beside a geoname_id and English names).
//
//	mmdb -o test.mmdb 198.51.100.0/24=EU,DE,HE 2001:db8:b::/48=EU,GB,ENG+CAM ...
//
// GeoLite2 stores only the part after the hyphen of an ISO 3166-2 code (HE
// for DE-HE); subdivisions are separated by '+', largest first. A custom
// database's own codes (us-east-1) are written as given.
//
// Only test networks belong in it (documentation ranges, loopback): it is
// built with reserved networks allowed.
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"strings"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

func main() {
	out := flag.String("o", "", "the MMDB file to write")
	dbType := flag.String("type", "GeoLite2-City", "the database type written in its metadata")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mmdb [-type TYPE] -o FILE NETWORK=CONTINENT,COUNTRY[,REGION[+REGION]...]...")
		os.Exit(2)
	}
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		DatabaseType:            *dbType,
		Description:             map[string]string{"en": "k8s_gateway test networks"},
		IncludeReservedNetworks: true,
		RecordSize:              28,
	})
	if err != nil {
		fail(err)
	}
	for _, arg := range flag.Args() {
		network, loc, ok := strings.Cut(arg, "=")
		if !ok {
			fail(fmt.Errorf("%q: want NETWORK=CONTINENT,COUNTRY[,REGION]", arg))
		}
		_, ipnet, err := net.ParseCIDR(network)
		if err != nil {
			fail(err)
		}
		parts := strings.Split(loc, ",")
		if len(parts) < 2 || len(parts) > 3 {
			fail(fmt.Errorf("%q: want CONTINENT,COUNTRY[,REGION]", loc))
		}
		record := mmdbtype.Map{
			"continent":          mmdbtype.Map{"code": mmdbtype.String(parts[0]), "geoname_id": geonameID(parts[0]), "names": names(parts[0])},
			"country":            mmdbtype.Map{"iso_code": mmdbtype.String(parts[1]), "geoname_id": geonameID(parts[1]), "names": names(parts[1])},
			"registered_country": mmdbtype.Map{"iso_code": mmdbtype.String(parts[1]), "geoname_id": geonameID(parts[1]), "names": names(parts[1])},
			"location":           mmdbtype.Map{"accuracy_radius": mmdbtype.Uint16(100), "latitude": mmdbtype.Float64(0), "longitude": mmdbtype.Float64(0)},
		}
		if len(parts) == 3 {
			var subs mmdbtype.Slice
			for _, code := range strings.Split(parts[2], "+") {
				subs = append(subs, mmdbtype.Map{"iso_code": mmdbtype.String(code), "geoname_id": geonameID(parts[1] + "-" + code), "names": names(code)})
			}
			record["subdivisions"] = subs
		}
		if err := tree.Insert(ipnet, record); err != nil {
			fail(fmt.Errorf("%s: %v", network, err))
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
}

// geonameID is a made-up GeoNames id of a code, stable across runs.
func geonameID(code string) mmdbtype.Uint32 {
	h := fnv.New32a()
	h.Write([]byte(code))
	return mmdbtype.Uint32(h.Sum32() % 10000000)
}

// names is the names map of a place, English only.
func names(code string) mmdbtype.Map {
	return mmdbtype.Map{"en": mmdbtype.String(code)}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mmdb:", err)
	os.Exit(1)
}
