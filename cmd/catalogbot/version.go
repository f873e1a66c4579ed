package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
)

// keyModules are the dependencies whose versions decide what catalogbot
// accepts and produces: the registry client, the YAML and Git readers and
// the GitHub client. A bug report that names them is one that can be
// reproduced.
var keyModules = []string{
	"github.com/google/go-containerregistry",
	"github.com/klauspost/compress",
	"github.com/go-git/go-git/v5",
	"github.com/google/go-github/v60",
	"github.com/bradleyfalzon/ghinstallation/v2",
	"github.com/spf13/cobra",
	"sigs.k8s.io/yaml",
}

// versionInfo is what catalogbot version prints; its JSON form is stable.
type versionInfo struct {
	Version string `json:"version"`
	// Commit is the commit the binary was built from: the one the
	// release linked in, or else the one Go recorded, with "-dirty" when
	// the checkout had changes; empty when neither is known (go install
	// module@version, or a build with -buildvcs=false).
	Commit    string       `json:"commit,omitempty"`
	GoVersion string       `json:"goVersion"`
	Platform  string       `json:"platform"`
	Modules   []moduleInfo `json:"modules"`
}

type moduleInfo struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

// releaseVersion is the version set at link time, or else the module
// version go install recorded, so that both kinds of build say what they
// are, and --version and the version command always agree.
func releaseVersion(linked string, bi *debug.BuildInfo) string {
	if linked != "dev" || bi == nil {
		return linked
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return linked
}

// readVersionInfo is what catalogbot version prints, the commit the one
// linked in (linkedCommit) or else the one Go recorded.
func readVersionInfo(version, linkedCommit string) versionInfo {
	info := versionInfo{
		Version:   version,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		Modules:   []moduleInfo{},
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		info.Commit = linkedCommit
		return info
	}
	info.GoVersion = bi.GoVersion
	info.Commit = cmp.Or(linkedCommit, buildCommit(bi))
	have := map[string]string{}
	for _, d := range bi.Deps {
		v := d.Version
		if d.Replace != nil {
			v = d.Replace.Version + " (replaces " + d.Version + ")"
		}
		have[d.Path] = v
	}
	for _, p := range keyModules {
		if v, ok := have[p]; ok {
			info.Modules = append(info.Modules, moduleInfo{Path: p, Version: v})
		}
	}
	return info
}

// buildCommit is the commit Go recorded building from a checkout
// (vcs.revision), so that a release binary names the commit it came from
// without a flag of its own, "-dirty" appended when the checkout had
// changes.
func buildCommit(bi *debug.BuildInfo) string {
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "-dirty"
	}
	return rev
}

// versionLine is the first line of catalogbot version and all of
// --version, so the two never disagree.
func versionLine(version string) string {
	return "catalogbot version " + version + "\n"
}

func newVersionCmd(a *app) *cobra.Command {
	output := "text"
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, the Go version and the versions of key dependencies",
		Long: `Print catalogbot's version, the commit it was built from (when the
build recorded one), the Go toolchain it was built with, its platform and
the versions of the modules that decide what it accepts and
produces (the registry client, the YAML, Git and GitHub libraries). Include
this in bug reports.

The first line is what catalogbot --version prints.`,
		Example: `  catalogbot version
  catalogbot version -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd.CommandPath(), "version takes no arguments, got %q", args[0])
			}
			if output != "text" && output != "json" {
				return usageErrorf(cmd.CommandPath(), "invalid --output value %q: want text or json%s", output, checks.DidYouMean(output, []string{"text", "json"}))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeVersion(a.stdout, readVersionInfo(a.version, commit), output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", output, "output format: text or json")
	return cmd
}

func writeVersion(w io.Writer, info versionInfo, output string) error {
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	if _, err := io.WriteString(w, versionLine(info.Version)); err != nil {
		return err
	}
	if info.Commit != "" {
		fmt.Fprintf(w, "commit: %s\n", info.Commit)
	}
	fmt.Fprintf(w, "go: %s %s\n", info.GoVersion, info.Platform)
	for _, m := range info.Modules {
		fmt.Fprintf(w, "%s %s\n", m.Path, m.Version)
	}
	return nil
}
