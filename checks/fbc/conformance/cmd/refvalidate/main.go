// Command refvalidate validates catalog directories with the reference
// library (operator-registry v1.65.0) the way `opm validate` does, and times
// each one. It exists so a benchmark can run the reference beside our
// validator.
//
//	refvalidate DIR...
//
// For each DIR it prints "DIR\t<rc>\t<elapsed seconds>" and exits 1 if any
// DIR is invalid.
//
// It calls pkg/lib/config.Validate, the function behind `opm validate`:
// declcfg.LoadFS with the default concurrency (runtime.NumCPU()) and then
// declcfg.ConvertToModel. In v1.65.0 ConvertToModel ends by running
// model.Validate itself, so all three phases run, each once. Calling
// Model.Validate a second time would be work opm does not do.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/operator-framework/operator-registry/pkg/lib/config"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: refvalidate DIR...")
		os.Exit(2)
	}
	ctx := context.Background()
	status := 0
	for _, dir := range os.Args[1:] {
		start := time.Now()
		err := config.Validate(ctx, os.DirFS(dir))
		elapsed := time.Since(start)
		rc := 0
		if err != nil {
			rc = 1
			status = 1
		}
		fmt.Printf("%s\t%d\t%.3f\n", dir, rc, elapsed.Seconds())
	}
	os.Exit(status)
}
