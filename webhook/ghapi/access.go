package ghapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/go-github/v60/github"
)

// AccessOf is the access login has to the repository owner/name, in
// GitHub's legacy words (admin, write, read, none; maintain counts as
// write and triage as read). A login GitHub does not know has none: a
// deleted account approves nothing, and never stalls a check.
func AccessOf(ctx context.Context, gh *github.Client, owner, name, login string) (string, error) {
	p, _, err := gh.Repositories.GetPermissionLevel(ctx, owner, name, login)
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
		return "none", nil
	}
	if err != nil {
		return "", err
	}
	return p.GetPermission(), nil
}
