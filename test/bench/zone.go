package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
)

// Zone parameters shared by every server, so that all answer alike.
const (
	ttl        = 60
	nameserver = "dns1.kube-system" // k8s_gateway's default apex, relative to the zone
)

// writeZone writes the records as a zone file with the SOA and NS that
// k8s_gateway serves for zone (fully qualified).
func writeZone(path, zone string, recs []record) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, "$ORIGIN %s\n$TTL %d\n", zone, ttl)
	fmt.Fprintf(w, "@ SOA %s.%s hostmaster.%s 1 300 60 604800 %d\n", nameserver, zone, zone, ttl)
	fmt.Fprintf(w, "@ NS %s.%s\n", nameserver, zone)
	for _, r := range recs {
		fmt.Fprintf(w, "%s A %s\n", r.name, r.addr)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Query mix: of every ten queries, eight ask an existing name for its A
// record, one asks an existing name for AAAA (NODATA), one asks a name that
// does not exist (NXDOMAIN).
const (
	mixNoData   = 0
	mixNXDomain = 1
)

// writeQueries writes a dnsperf data file of lines queries over recs, drawn
// uniformly with a fixed seed so every server gets the same sequence.
func writeQueries(path, zone string, recs []record, lines int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range lines {
		switch i % 10 {
		case mixNoData:
			fmt.Fprintf(w, "%s AAAA\n", recs[rnd.IntN(len(recs))].name)
		case mixNXDomain:
			fmt.Fprintf(w, "nx%d.%s A\n", rnd.IntN(1<<30), zone)
		default:
			fmt.Fprintf(w, "%s A\n", recs[rnd.IntN(len(recs))].name)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
