package ghapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/owners"
)

// Actions is the GitHub Actions environment of one step: what the workflow
// run gives a program through its environment and event file. Both front
// ends that speak to GitHub read it here: the Action's check, and anything
// else a workflow step runs.
type Actions struct {
	// EventPath, EventName: $GITHUB_EVENT_PATH, $GITHUB_EVENT_NAME.
	EventPath, EventName string
	// Token and APIURL reach the REST API ($GITHUB_TOKEN,
	// $GITHUB_API_URL).
	Token, APIURL string
	// Repo is owner/name ($GITHUB_REPOSITORY, or the event's).
	Repo string
	// SummaryFile and OutputFile are $GITHUB_STEP_SUMMARY and
	// $GITHUB_OUTPUT.
	SummaryFile, OutputFile string
	// Workspace is $GITHUB_WORKSPACE.
	Workspace string
	// PR is the event's pull request; nil when the event holds none.
	PR *ActionsPR
	// Group is the merge queue's group of a merge_group event; nil for
	// any other event.
	Group *ActionsGroup
}

// ActionsGroup is what a merge_group event says of the group the merge
// queue asks checks of: its commit (HeadSHA, on HeadRef under
// gh-readonly-queue/) is the base branch's tip (BaseSHA) with the queued
// pull requests merged in, and is checked out as GITHUB_SHA.
type ActionsGroup struct {
	BaseSHA, HeadSHA string
	BaseRef, HeadRef string
}

// ActionsPR is what the event says of its pull request.
type ActionsPR struct {
	Number           int
	Draft            bool
	Labels           []string
	BaseSHA, HeadSHA string
	Author           string
}

// actionsEvent is the part of a pull_request (pull_request_target,
// pull_request_review) event payload that is read.
type actionsEvent struct {
	Number      int `json:"number"`
	PullRequest *struct {
		Number int  `json:"number"`
		Draft  bool `json:"draft"`
		Labels []struct {
			Name string `json:"name"`
		} `json:"labels"`
		Base struct {
			SHA string `json:"sha"`
		} `json:"base"`
		Head struct {
			SHA string `json:"sha"`
		} `json:"head"`
		User struct {
			Login string `json:"login"`
		} `json:"user"`
	} `json:"pull_request"`
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	MergeGroup *struct {
		BaseSHA string `json:"base_sha"`
		HeadSHA string `json:"head_sha"`
		BaseRef string `json:"base_ref"`
		HeadRef string `json:"head_ref"`
	} `json:"merge_group"`
}

// ReadActions reads the environment through getenv and the event file it
// names. An event without a pull request leaves PR nil; a merge_group
// event sets Group instead.
func ReadActions(getenv func(string) string) (*Actions, error) {
	a := &Actions{
		EventPath:   getenv("GITHUB_EVENT_PATH"),
		EventName:   getenv("GITHUB_EVENT_NAME"),
		Token:       getenv("GITHUB_TOKEN"),
		APIURL:      getenv("GITHUB_API_URL"),
		Repo:        getenv("GITHUB_REPOSITORY"),
		SummaryFile: getenv("GITHUB_STEP_SUMMARY"),
		OutputFile:  getenv("GITHUB_OUTPUT"),
		Workspace:   getenv("GITHUB_WORKSPACE"),
	}
	if a.EventPath == "" {
		return a, nil
	}
	data, err := os.ReadFile(a.EventPath)
	if err != nil {
		return nil, fmt.Errorf("read the GitHub event file $GITHUB_EVENT_PATH: %w", err)
	}
	var ev actionsEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("the GitHub event file %s is not a JSON event: %v", a.EventPath, err)
	}
	if a.Repo == "" {
		a.Repo = ev.Repository.FullName
	}
	if g := ev.MergeGroup; g != nil {
		if g.BaseSHA == "" || g.HeadSHA == "" {
			return nil, fmt.Errorf("the GitHub event file %s: the merge group has no base_sha or head_sha", a.EventPath)
		}
		a.Group = &ActionsGroup{BaseSHA: g.BaseSHA, HeadSHA: g.HeadSHA, BaseRef: g.BaseRef, HeadRef: g.HeadRef}
		return a, nil
	}
	pr := ev.PullRequest
	if pr == nil {
		return a, nil
	}
	if pr.Base.SHA == "" || pr.Head.SHA == "" {
		return nil, fmt.Errorf("the GitHub event file %s: the pull request has no base or head sha", a.EventPath)
	}
	a.PR = &ActionsPR{
		Number:  cmp.Or(pr.Number, ev.Number),
		Draft:   pr.Draft,
		BaseSHA: pr.Base.SHA,
		HeadSHA: pr.Head.SHA,
		Author:  pr.User.Login,
	}
	for _, l := range pr.Labels {
		a.PR.Labels = append(a.PR.Labels, l.Name)
	}
	return a, nil
}

// NoPRError says why an event without a pull request cannot be checked.
func (a *Actions) NoPRError() error {
	name := cmp.Or(a.EventName, "this")
	return fmt.Errorf("the GitHub event file %s holds no pull request (%s event); run on pull_request or merge_group, or pass --base and --head", a.EventPath, name)
}

// RepoDir is dir relative to the workspace, which annotation paths are
// relative to; "" when dir is the workspace or lies outside it (paths are
// then used as they are).
func (a *Actions) RepoDir(dir string) string {
	if a.Workspace == "" {
		return ""
	}
	absWS, err1 := filepath.Abs(a.Workspace)
	absDir, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return ""
	}
	rel, err := filepath.Rel(absWS, absDir)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(rel)
}

// CanReadEvents says whether the conversation of pull request number can
// be read, and if not, a sentence saying why for the report.
func (a *Actions) CanReadEvents(number int) (bool, string) {
	switch {
	case a.Token == "":
		return false, "No `GITHUB_TOKEN` was given, so only the author's approval (and any `--approve`) was considered; reviews and `/approve` comments were not read."
	case a.Repo == "" || number <= 0:
		return false, "No pull request number or repository is known, so only the author's approval (and any `--approve`) was considered."
	}
	return true, ""
}

// Events reads the reviews and comments of pull request number with the
// step's token, each bound to the head it was given on (see Events).
func (a *Actions) Events(ctx context.Context, number int, headSHA string) ([]owners.Event, error) {
	owner, name, ok := strings.Cut(a.Repo, "/")
	if !ok || owner == "" || name == "" {
		return nil, fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name", a.Repo)
	}
	base, err := url.Parse(cmp.Or(a.APIURL, DefaultBaseURL))
	if err != nil || !base.IsAbs() {
		return nil, fmt.Errorf("GITHUB_API_URL %q is not an absolute URL", a.APIURL)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	// The transport retries server errors and waits out rate limits,
	// which a busy repository's shared Actions token does run into.
	client := github.NewClient(&http.Client{Transport: NewTransport(TransportOptions{}), Timeout: 2 * time.Minute}).WithAuthToken(a.Token)
	client.BaseURL = base
	// The Action sees no edit deliveries: an edited comment counts
	// for nothing here.
	return Events(ctx, client, owner, name, number, headSHA, nil, nil)
}

// SplitWords splits an Action's free-form argument string into words. A
// container action's arguments are never split by the runner, so an input
// such as "--all-images --insecure-registry localhost:5000" arrives as one
// argument. SplitWords splits s into words at blanks and line breaks, as a POSIX
// shell does without expanding anything: 'single' quotes keep everything,
// "double" quotes keep all but \" and \\, and a backslash elsewhere keeps
// the next character.
func SplitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				w.WriteByte(s[i])
			}
		case c == '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			w.WriteString(s[i+1 : i+1+end])
			i += 1 + end
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				w.WriteByte(s[i])
			}
			if !closed {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// appendStepFile appends what write writes to the step file at path
// ($GITHUB_STEP_SUMMARY, $GITHUB_OUTPUT), which the runner created for the
// step, and names it (by its variable) on failure.
// The text is built in memory first, so a failure leaves no half entry.
func appendStepFile(path, name string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return fmt.Errorf("%s (%s): %w", name, path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrPermission) {
		// The runner creates these files as its own user; a container
		// running as another (non-root) user cannot write them.
		return fmt.Errorf("open %s: %w (running as uid %d; the step's files belong to the runner's user)", name, err, os.Getuid())
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("write %s (%s): %w", name, path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s (%s): %w", name, path, err)
	}
	return nil
}
