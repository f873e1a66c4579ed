package ghapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
)

// ErrTooManyFiles is returned (wrapped) by PRFiles for a pull request that
// lists owners.MaxFiles files or more: GitHub lists no more than that many,
// so the files nobody sees could be anything, and the change cannot be
// checked.
var ErrTooManyFiles = errors.New("the pull request changes too many files to check")

// PRFiles lists every file pull request number changes, following every
// page. A rename comes as one File with its PreviousPath. GitHub's other
// statuses are mapped onto the four the checks know: a copy adds its new
// path, and a mode-only change ("changed") or "unchanged" modifies it, so
// that each still needs its owners' approval.
func PRFiles(ctx context.Context, c *github.Client, owner, repo string, number int) ([]change.File, error) {
	var files []change.File
	opts := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := c.PullRequests.ListFiles(ctx, owner, repo, number, opts)
		if err != nil {
			return nil, fmt.Errorf("list the files of %s/%s#%d: %w", owner, repo, number, err)
		}
		for _, f := range page {
			files = append(files, fileOf(f))
		}
		if len(files) >= owners.MaxFiles {
			return nil, fmt.Errorf("%s/%s#%d: %w: GitHub lists at most %d files", owner, repo, number, ErrTooManyFiles, owners.MaxFiles)
		}
		if resp.NextPage == 0 || len(page) == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	change.SortFiles(files)
	return files, nil
}

func fileOf(f *github.CommitFile) change.File {
	out := change.File{Path: f.GetFilename()}
	switch f.GetStatus() {
	case "added", "copied":
		out.Status = change.Added
	case "removed":
		out.Status = change.Removed
	case "renamed":
		out.Status = change.Renamed
		out.PreviousPath = f.GetPreviousFilename()
	default:
		out.Status = change.Modified
	}
	return out
}
