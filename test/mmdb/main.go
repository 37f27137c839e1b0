// Command mmdb writes a small GeoIP2-City database for the tests of traffic
// steering, with MaxMind's writer library: each argument NETWORK=LOCATION
// maps a network to a continent, a country and a region, as the geoip
// plugin reads them (continent.code, country.iso_code,
// subdivisions[0].iso_code).
//
//	mmdb -o test.mmdb 192.0.2.0/25=EU,DE,DE-HE 2001:db8:eu::/48=EU,DE,DE-HE ...
//
// Only test networks belong in it (documentation ranges, loopback): it is
// built with reserved networks allowed.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

func main() {
	out := flag.String("o", "", "the MMDB file to write")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mmdb -o FILE NETWORK=CONTINENT,COUNTRY[,REGION]...")
		os.Exit(2)
	}
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		DatabaseType:            "GeoIP2-City",
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
			"continent": mmdbtype.Map{"code": mmdbtype.String(parts[0])},
			"country":   mmdbtype.Map{"iso_code": mmdbtype.String(parts[1])},
		}
		if len(parts) == 3 {
			record["subdivisions"] = mmdbtype.Slice{mmdbtype.Map{"iso_code": mmdbtype.String(parts[2])}}
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

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mmdb:", err)
	os.Exit(1)
}
