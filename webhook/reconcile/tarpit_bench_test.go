package reconcile

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/egress/egresstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// BenchmarkReconcileTarpit is one reconcile of a pull request, by the App
// as catalogbot serve builds it, whose catalog adds 1, 16 or 160 related
// images on a registry that accepts connections and never answers, with
// limits.referenceTimeout at 2 s in the base policy. It measures what
// BenchmarkTarpit in policy/review/pipeline measures plus everything the App adds
// (fetching the trees, the GitHub calls): the time should stay one
// deadline whatever the count, and the run should be left in progress,
// naming the registry.
func BenchmarkReconcileTarpit(b *testing.B) {
	tarpit := registrytest.NewTarpit(b)
	// The tarpit's name resolves to loopback, which the operator allows
	// as it would an internal mirror; nothing else resolves.
	rule, err := egress.New([]string{"slow.test"}, egresstest.Resolver{"slow.test": {"127.0.0.1"}})
	if err != nil {
		b.Fatal(err)
	}
	host := "slow.test:" + tarpit.Port
	anonymous := authn.NewMultiKeychain()
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: anonymous, Egress: rule})
	if err != nil {
		b.Fatal(err)
	}
	gh := githubtest.New(b)
	repo := gh.AddRepo("acme", "catalog", catalogRepo(mergePolicy+"limits:\n  referenceTimeout: 2s\n"))
	app, err := NewApp(AppOptions{
		Config: &webhook.Config{
			AppID:      gh.AppID(),
			PrivateKey: gh.PrivateKeyPEM(),
			GitHubURL:  gh.URL + "/",
			CacheDir:   b.TempDir(),
		},
		Metrics:  webhook.NewMetrics(prometheus.NewRegistry()),
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Images:   &images.Options{Keychain: anonymous, Egress: rule},
		Renderer: renderer,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { app.Close() })

	branches := 0
	for _, n := range []int{1, 16, 160} {
		b.Run(fmt.Sprintf("images=%d", n), func(b *testing.B) {
			var related strings.Builder
			related.WriteString("relatedImages:\n")
			for i := range n {
				fmt.Fprintf(&related, "  - name: img%d\n    image: %s/img%d@sha256:%064d\n", i, host, i, i)
			}
			for i := 0; i < b.N; i++ {
				// Every reconcile is of a pull request of its own, so
				// that none is left to a retry of an earlier one.
				b.StopTimer()
				branches++
				branch := fmt.Sprintf("tarpit-%d", branches)
				repo.Commit(branch, map[string]string{"catalog/foo/catalog.yaml": fooCatalog + related.String()}, "add images")
				pr := repo.OpenPR("alice", branch, "main")
				job := webhook.Job{
					Key:          webhook.Key{Repo: "acme/catalog", PR: pr.Number, Kind: webhook.KindPR},
					Event:        "pull_request",
					Delivery:     "delivery-" + branch,
					Installation: gh.InstallationID(repo),
				}
				conns := tarpit.Conns()
				b.StartTimer()

				if _, err := app.Process(context.Background(), job); err != nil {
					b.Fatal(err)
				}

				b.StopTimer()
				var run *githubtest.CheckRun
				for _, r := range repo.CheckRuns(pr.HeadSHA()) {
					if r.Name == CheckRunName && (run == nil || r.ID > run.ID) {
						run = &r
					}
				}
				if run == nil {
					b.Fatalf("no %s check run", CheckRunName)
				}
				want := fmt.Sprintf("registry %s (%d reference", host, n)
				if run.Status != "in_progress" || !strings.Contains(run.Summary, want) {
					b.Fatalf("run %s/%s %q, want in progress naming %q:\n%s", run.Status, run.Conclusion, run.Title, want, run.Summary)
				}
				if i == 0 {
					b.Logf("run %s %q, %d tarpit connections: %s", run.Status, run.Title, tarpit.Conns()-conns, firstLine(run.Summary, want))
				}
				b.StartTimer()
			}
		})
	}
}

// firstLine is the line of s that holds sub.
func firstLine(s, sub string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Contains(line, sub) {
			return line
		}
	}
	return ""
}
