// Command fbcgen writes a synthetic, valid File-Based Catalog for
// benchmarks (see package checks/fbc/fbcgen).
//
//	go run ./checks/fbc/fbcgen/cmd/fbcgen -o DIR -size 110MB [-format yaml|json] [-seed N]
//	go run ./checks/fbc/fbcgen/cmd/fbcgen -o DIR -packages 10 -bundles 15 [-channels 3] [-payload mixed]
//
// -size picks the counts with fbcgen.SpecForSize; -packages, -bundles,
// -channels and -payload override them. DIR must not exist or be empty
// unless -force is given. The statistics are printed on stdout; -json prints
// them as one JSON object instead.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/checks/fbc/fbcgen"
)

func main() {
	var (
		out      = flag.String("o", "", "output directory (required)")
		size     = flag.String("size", "", "approximate output size, e.g. 110MB, 27.5MB, 5MiB, 500KB")
		format   = flag.String("format", "yaml", "yaml or json")
		seed     = flag.Uint64("seed", fbcgen.DefaultSeed, "seed for names, text, digests and graphs")
		packages = flag.Int("packages", 0, "number of packages (overrides -size)")
		bundles  = flag.Int("bundles", 0, "bundles per package (overrides -size)")
		channels = flag.Int("channels", 0, "channels per package (overrides -size)")
		payload  = flag.String("payload", "", "bundle-object, csv-metadata or mixed")
		force    = flag.Bool("force", false, "write into a non-empty directory")
		asJSON   = flag.Bool("json", false, "print the statistics as JSON")
	)
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: fbcgen -o DIR (-size SIZE | -packages N -bundles N) [flags]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() > 0 || (*size == "" && (*packages == 0 || *bundles == 0)) {
		flag.Usage()
		os.Exit(2)
	}

	spec := fbcgen.Spec{Packages: 10, BundlesPerPackage: 15, ChannelsPerPackage: 3, Payload: fbcgen.PayloadMixed, Format: *format}
	if *size != "" {
		n, err := parseSize(*size)
		if err != nil {
			fatal(err)
		}
		spec = fbcgen.SpecForSize(n, *format)
	}
	spec.Seed = *seed
	if *packages > 0 {
		spec.Packages = *packages
	}
	if *bundles > 0 {
		spec.BundlesPerPackage = *bundles
	}
	if *channels > 0 {
		spec.ChannelsPerPackage = *channels
	}
	if *payload != "" {
		spec.Payload = *payload
	}

	if ents, err := os.ReadDir(*out); err == nil && len(ents) > 0 && !*force {
		fatal(fmt.Errorf("%s is not empty (use -force)", *out))
	}
	start := time.Now()
	st, err := fbcgen.Write(*out, spec)
	if err != nil {
		fatal(err)
	}
	elapsed := time.Since(start)
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(struct {
			Spec    fbcgen.Spec
			Stats   fbcgen.Stats
			Seconds float64
		}{spec, st, elapsed.Seconds()})
		return
	}
	fmt.Printf("spec: %d packages x %d bundles, %d channels/package, payload %s, format %s, seed %d\n",
		spec.Packages, spec.BundlesPerPackage, spec.ChannelsPerPackage, spec.Payload, spec.Format, spec.Seed)
	fmt.Printf("wrote %s: %s\n", *out, st)
	fmt.Printf("generated in %.2fs\n", elapsed.Seconds())
}

// parseSize reads "110MB", "27.5MB", "5MiB", "500KB", "1GB" or a byte count.
// MB/KB/GB are decimal; MiB/KiB/GiB binary.
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"B", 1}}
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(u.suffix)) && (u.suffix != "B" || !strings.HasSuffix(strings.ToUpper(t), "IB")) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(v * mult), nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "fbcgen:", err)
	os.Exit(1)
}
