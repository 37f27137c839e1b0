package index

import "testing"

// TestClientMatch: how closely a target's location matches a client's, as
// the geoip plugin gives it: from GeoLite2 or GeoIP2, whose subdivision
// codes are only the part after the hyphen of ISO 3166-2 ("HE" for DE-HE),
// or from a custom MMDB with whole codes of its own.
func TestClientMatch(t *testing.T) {
	geolite := Client{Continent: "EU", Country: "DE", Regions: "HE"}
	gb := Client{Continent: "EU", Country: "GB", Regions: "ENG,CAM"}
	custom := Client{Continent: "NA", Country: "US", Regions: "us-east-1"}
	for _, tt := range []struct {
		name   string
		client Client
		target string
		want   int
	}{
		{"ISO code against GeoLite2's subdivision", geolite, "region=DE-HE", 3},
		{"ISO code and country against GeoLite2's", geolite, "country=DE,region=DE-HE", 3},
		{"lower case", geolite, "region=de-he", 3},
		{"another subdivision of the country", geolite, "country=DE,region=DE-BY", 2},
		{"the same subdivision code in another country", geolite, "region=AT-HE", 0},
		{"the subdivision part alone", geolite, "region=HE", 3},
		{"second subdivision of the client", gb, "region=GB-CAM", 3},
		{"first subdivision of the client", gb, "region=GB-ENG", 3},
		{"whole ISO code from a database that gives it", Client{Country: "DE", Regions: "DE-HE"}, "region=DE-HE", 3},
		{"client's country unknown: the part does not match", Client{Regions: "HE"}, "region=DE-HE", 0},
		{"custom code, whole", custom, "region=us-east-1", 3},
		{"custom code is not split at its hyphen", Client{Country: "US", Regions: "east-1"}, "region=us-east-1", 0},
		{"custom code, another", custom, "continent=NA,region=us-west-2", 1},
		{"continent only", geolite, "continent=EU", 1},
		{"nothing in common", geolite, "continent=NA,country=US,region=US-VA", 0},
	} {
		loc, err := ParseLocation(tt.target)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := tt.client.match([]byte(packLocation(loc))); got != tt.want {
			t.Errorf("%s: client %+v, target %s: match %d, want %d", tt.name, tt.client, tt.target, got, tt.want)
		}
	}
}
