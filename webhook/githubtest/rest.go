package githubtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxPRFiles is GitHub's cap on the files of a pull request it lists.
const maxPRFiles = 3000

// routes maps GitHub's REST paths to handlers. Handlers run with s.mu held.
func (s *Server) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("POST /app/installations/{id}/access_tokens", s.app(s.createToken))
	m.HandleFunc("GET /app/installations", s.app(s.listInstallations))
	m.HandleFunc("GET /repos/{owner}/{repo}/installation", s.app(s.repoInstallation))
	m.HandleFunc("GET /installation/repositories", s.listInstallationRepos)
	m.HandleFunc("GET /repos/{owner}/{repo}", s.repo(s.getRepo))
	m.HandleFunc("GET /repos/{owner}/{repo}/pulls", s.repo(s.listPulls))
	m.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}", s.repo(s.pull(s.getPull)))
	m.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/files", s.repo(s.pull(s.listFiles)))
	m.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/reviews", s.repo(s.pull(s.listReviews)))
	m.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/merge", s.repo(s.pull(s.isMerged)))
	m.HandleFunc("PUT /repos/{owner}/{repo}/pulls/{n}/merge", s.repo(s.pull(s.merge)))
	m.HandleFunc("GET /repos/{owner}/{repo}/issues/{n}/comments", s.repo(s.pull(s.listComments)))
	m.HandleFunc("POST /repos/{owner}/{repo}/issues/{n}/comments", s.repo(s.pull(s.createComment)))
	m.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", s.repo(s.updateComment))
	m.HandleFunc("GET /repos/{owner}/{repo}/issues/{n}/timeline", s.repo(s.pull(s.listTimeline)))
	m.HandleFunc("POST /repos/{owner}/{repo}/check-runs", s.repo(s.createCheckRun))
	m.HandleFunc("PATCH /repos/{owner}/{repo}/check-runs/{id}", s.repo(s.updateCheckRun))
	m.HandleFunc("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", s.repo(s.listCheckRuns))
	m.HandleFunc("GET /repos/{owner}/{repo}/commits/{ref}/check-suites", s.repo(s.listCheckSuites))
	m.HandleFunc("POST /repos/{owner}/{repo}/statuses/{sha}", s.repo(s.createStatus))
	m.HandleFunc("GET /repos/{owner}/{repo}/collaborators/{user}/permission", s.repo(s.permission))
	m.HandleFunc("GET /repos/{owner}/{repo}/contents/{path...}", s.repo(s.contents))
	m.HandleFunc("GET /repos/{owner}/{repo}/rules/branches/{branch...}", s.repo(s.rulesForBranch))
	s.gitDataRoutes(m)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { apiError(w, http.StatusNotFound, "Not Found") })
	return m
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "encoding the response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func apiError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, obj{"message": message, "documentation_url": "https://docs.github.com/rest"})
}

// validationError is GitHub's 422 shape.
func validationError(w http.ResponseWriter, message string) {
	writeJSON(w, http.StatusUnprocessableEntity, obj{
		"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest",
		"errors": []obj{{"resource": "Request", "code": "custom", "message": message}},
	})
}

// app requires a valid App JWT.
func (s *Server) app(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.verifyJWT(bearer(r)); err != nil {
			apiError(w, http.StatusUnauthorized, "A JSON web token could not be decoded: "+err.Error())
			return
		}
		h(w, r)
	}
}

type repoHandler func(w http.ResponseWriter, r *http.Request, repo *Repo)

// repo requires an installation token of the installation holding the repository named in the
// path (401 without a valid token, 404 when the installation does not hold it, as GitHub).
func (s *Server) repo(h repoHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in := s.tokenInstallation(bearer(r))
		if in == nil {
			apiError(w, http.StatusUnauthorized, "Bad credentials")
			return
		}
		repo := s.repos[strings.ToLower(r.PathValue("owner")+"/"+r.PathValue("repo"))]
		if repo == nil || s.installationOf(repo.Owner) != in {
			apiError(w, http.StatusNotFound, "Not Found")
			return
		}
		h(w, r, repo)
	}
}

type pullHandler func(w http.ResponseWriter, r *http.Request, repo *Repo, pr *PR)

func (s *Server) pull(h pullHandler) repoHandler {
	return func(w http.ResponseWriter, r *http.Request, repo *Repo) {
		n, err := strconv.Atoi(r.PathValue("n"))
		pr := repo.prs[n]
		if err != nil || pr == nil {
			apiError(w, http.StatusNotFound, "Not Found")
			return
		}
		h(w, r, repo, pr)
	}
}

// page slices n items as GitHub paginates (per_page default 30, at most 100) and sets the Link
// header with next, last, first and prev as GitHub does.
func (s *Server) page(w http.ResponseWriter, r *http.Request, n int) (lo, hi int) {
	q := r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	pg, err := strconv.Atoi(q.Get("page"))
	if err != nil || pg <= 0 {
		pg = 1
	}
	last := max(1, (n+per-1)/per)
	link := func(p int, rel string) string {
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(per))
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		return fmt.Sprintf(`<%s%s>; rel="%s"`, s.URL, u.String(), rel)
	}
	var links []string
	if pg > 1 {
		links = append(links, link(pg-1, "prev"))
	}
	if pg < last {
		links = append(links, link(pg+1, "next"), link(last, "last"))
	}
	if pg > 1 {
		links = append(links, link(1, "first"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	lo = min((pg-1)*per, n)
	return lo, min(lo+per, n)
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		apiError(w, http.StatusBadRequest, "Problems parsing JSON")
		return false
	}
	return true
}

// App endpoints.

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	in := s.installationByID(id)
	if in == nil {
		apiError(w, http.StatusNotFound, "Not Found")
		return
	}
	tk := s.newToken(in)
	writeJSON(w, http.StatusCreated, obj{
		"token": tk.value, "expires_at": ts(tk.expires), "permissions": appPermissions(), "repository_selection": "selected",
	})
}

func (s *Server) listInstallations(w http.ResponseWriter, r *http.Request) {
	lo, hi := s.page(w, r, len(s.installOrder))
	out := []obj{}
	for _, in := range s.installOrder[lo:hi] {
		out = append(out, s.installationJSON(in))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) repoInstallation(w http.ResponseWriter, r *http.Request) {
	repo := s.repos[strings.ToLower(r.PathValue("owner")+"/"+r.PathValue("repo"))]
	if repo == nil {
		apiError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, s.installationJSON(s.installationOf(repo.Owner)))
}

func (s *Server) listInstallationRepos(w http.ResponseWriter, r *http.Request) {
	in := s.tokenInstallation(bearer(r))
	if in == nil {
		apiError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	lo, hi := s.page(w, r, len(in.repos))
	out := []obj{}
	for _, repo := range in.repos[lo:hi] {
		out = append(out, s.repoJSON(repo))
	}
	writeJSON(w, http.StatusOK, obj{"total_count": len(in.repos), "repository_selection": "selected", "repositories": out})
}

// Repository and pull request endpoints.

func (s *Server) getRepo(w http.ResponseWriter, r *http.Request, repo *Repo) {
	writeJSON(w, http.StatusOK, s.repoJSON(repo))
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request, repo *Repo) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var prs []*PR
	for _, pr := range repo.sortedPRs() {
		if state != "all" && pr.state != state {
			continue
		}
		if b := q.Get("base"); b != "" && pr.baseRef != b {
			continue
		}
		if h := q.Get("head"); h != "" && h != repo.Owner+":"+pr.headRef {
			continue
		}
		prs = append(prs, pr)
	}
	// GitHub's default order is newest first.
	if q.Get("direction") != "asc" {
		sort.SliceStable(prs, func(i, j int) bool { return prs[i].Number > prs[j].Number })
	}
	lo, hi := s.page(w, r, len(prs))
	out := []obj{}
	for _, pr := range prs[lo:hi] {
		out = append(out, s.pullJSON(pr, false))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getPull(w http.ResponseWriter, r *http.Request, repo *Repo, pr *PR) {
	writeJSON(w, http.StatusOK, s.pullJSON(pr, true))
}

func (s *Server) listFiles(w http.ResponseWriter, r *http.Request, repo *Repo, pr *PR) {
	_, changes, err := pr.changesLocked()
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if len(changes) > maxPRFiles {
		changes = changes[:maxPRFiles]
	}
	lo, hi := s.page(w, r, len(changes))
	api := s.URL + "/repos/" + repo.FullName()
	out := []obj{}
	for _, c := range changes[lo:hi] {
		e := obj{
			"sha": c.SHA, "filename": c.Filename, "status": c.Status, "additions": c.Additions,
			"deletions": c.Deletions, "changes": c.Additions + c.Deletions,
			"blob_url":     fmt.Sprintf("%s/%s/blob/%s/%s", s.URL, repo.FullName(), pr.headSHA, c.Filename),
			"raw_url":      fmt.Sprintf("%s/%s/raw/%s/%s", s.URL, repo.FullName(), pr.headSHA, c.Filename),
			"contents_url": fmt.Sprintf("%s/contents/%s?ref=%s", api, c.Filename, pr.headSHA),
		}
		if c.PreviousFilename != "" {
			e["previous_filename"] = c.PreviousFilename
		}
		out = append(out, e)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listReviews(w http.ResponseWriter, r *http.Request, repo *Repo, pr *PR) {
	var rvs []*review
	for _, rv := range repo.reviews {
		if rv.number == pr.Number {
			rvs = append(rvs, rv)
		}
	}
	lo, hi := s.page(w, r, len(rvs))
	out := []obj{}
	for _, rv := range rvs[lo:hi] {
		out = append(out, s.reviewJSON(repo, rv))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) isMerged(w http.ResponseWriter, r *http.Request, repo *Repo, pr *PR) {
	if pr.merged {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	apiError(w, http.StatusNotFound, "Not Found")
}

func (s *Server) merge(w http.ResponseWriter, r *http.Request, repo *Repo, pr *PR) {
	var req struct {
		CommitTitle   string `json:"commit_title"`
		CommitMessage string `json:"commit_message"`
		SHA           string `json:"sha"`
		MergeMethod   string `json:"merge_method"`
	}
	if r.ContentLength != 0 && !decodeBody(w, r, &req) {
		return
	}
	if req.MergeMethod == "" {
		req.MergeMethod = "merge"
	}
	switch {
	case pr.state != "open":
		apiError(w, http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	case pr.draft:
		apiError(w, http.StatusMethodNotAllowed, "Pull Request is still a draft")
	case repo.queuedLocked(pr.baseRef):
		apiError(w, http.StatusMethodNotAllowed, mergeQueueMessage)
	case req.SHA != "" && req.SHA != pr.headSHA:
		apiError(w, http.StatusConflict, "Head branch was modified. Review and try the merge again.")
	case !pr.mergeableLocked():
		apiError(w, http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	default:
		sha, err := pr.mergeLocked(req.MergeMethod, req.CommitTitle, req.CommitMessage, s.AppSlug()+"[bot]")
		if err != nil {
			apiError(w, http.StatusInternalServerError, "merging: "+err.Error())
			return
		}
		writeJSON(w, http.StatusOK, obj{"sha": sha, "merged": true, "message": "Pull Request successfully merged"})
	}
}

// Comments.

func (s *Server) listComments(w http.ResponseWriter, r *http.Request, repo *Repo, pr *PR) {
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		since, _ = time.Parse(time.RFC3339, v)
	}
	var cs []*issueComment
	for _, c := range repo.comments {
		if c.number == pr.Number && !c.UpdatedAt.Before(since) {
			cs = append(cs, c)
		}
	}
	lo, hi := s.page(w, r, len(cs))
	out := []obj{}
	for _, c := range cs[lo:hi] {
		out = append(out, s.commentJSON(repo, c))
	}
	writeJSON(w, http.StatusOK, out)
}

// listTimeline serves the PR's committed and head_ref_force_pushed
// events, the part of GitHub's timeline the fake models.
func (s *Server) listTimeline(w http.ResponseWriter, r *http.Request, repo *Repo, pr *PR) {
	lo, hi := s.page(w, r, len(pr.timeline))
	out := []obj{}
	for _, ev := range pr.timeline[lo:hi] {
		out = append(out, s.timelineJSON(repo, pr, ev))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request, repo *Repo, pr *PR) {
	var req struct {
		Body string `json:"body"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	c := repo.addComment(pr.Number, s.AppSlug()+"[bot]", req.Body)
	w.Header().Set("Location", fmt.Sprintf("%s/repos/%s/issues/comments/%d", s.URL, repo.FullName(), c.ID))
	writeJSON(w, http.StatusCreated, s.commentJSON(repo, c))
}

func (s *Server) updateComment(w http.ResponseWriter, r *http.Request, repo *Repo) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var req struct {
		Body string `json:"body"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	editor := s.actor(bearer(r))
	for _, c := range repo.comments {
		if c.ID == id {
			// As on GitHub: the author, or anyone with write access,
			// may edit a comment; the comment keeps its author.
			if !strings.EqualFold(editor, c.User) && !strings.HasSuffix(editor, "[bot]") && !repo.canWrite(editor) {
				apiError(w, http.StatusForbidden, "Must have admin rights to Repository.")
				return
			}
			c.prevBody, c.editedBy = c.Body, editor
			c.Body, c.UpdatedAt = req.Body, s.now()
			writeJSON(w, http.StatusOK, s.commentJSON(repo, c))
			return
		}
	}
	apiError(w, http.StatusNotFound, "Not Found")
}

// Check runs, suites and statuses.

type checkRunRequest struct {
	Name        *string    `json:"name"`
	HeadSHA     string     `json:"head_sha"`
	DetailsURL  *string    `json:"details_url"`
	ExternalID  *string    `json:"external_id"`
	Status      *string    `json:"status"`
	Conclusion  *string    `json:"conclusion"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	Output      *struct {
		Title       *string      `json:"title"`
		Summary     *string      `json:"summary"`
		Text        *string      `json:"text"`
		Annotations []Annotation `json:"annotations"`
	} `json:"output"`
}

// apply updates a run as GitHub does: a conclusion completes it, annotations accumulate, and the
// other output fields are replaced.
func (req *checkRunRequest) apply(cr *checkRun, now time.Time) error {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&cr.Name, req.Name)
	set(&cr.DetailsURL, req.DetailsURL)
	set(&cr.ExternalID, req.ExternalID)
	set(&cr.Status, req.Status)
	if req.Conclusion != nil {
		cr.Conclusion, cr.Status = *req.Conclusion, "completed"
	}
	if cr.Status == "completed" && cr.Conclusion == "" {
		return fmt.Errorf("conclusion is required when status is completed")
	}
	if req.StartedAt != nil {
		cr.StartedAt = req.StartedAt.UTC()
	}
	if req.CompletedAt != nil {
		cr.CompletedAt = req.CompletedAt.UTC()
	}
	if cr.Status == "completed" && cr.CompletedAt.IsZero() {
		cr.CompletedAt = now
	}
	if o := req.Output; o != nil {
		if len(o.Annotations) > 50 {
			return fmt.Errorf("at most 50 annotations may be sent per request, got %d", len(o.Annotations))
		}
		set(&cr.Title, o.Title)
		set(&cr.Summary, o.Summary)
		set(&cr.Text, o.Text)
		cr.Annotations = append(cr.Annotations, o.Annotations...)
	}
	return nil
}

func (s *Server) createCheckRun(w http.ResponseWriter, r *http.Request, repo *Repo) {
	var req checkRunRequest
	if !decodeBody(w, r, &req) {
		return
	}
	c, err := repo.resolve(req.HeadSHA)
	if err != nil || c.Hash.String() != req.HeadSHA {
		validationError(w, "No commit found for SHA: "+req.HeadSHA)
		return
	}
	now := s.now()
	cr := &checkRun{CheckRun: CheckRun{ID: s.newID(), HeadSHA: req.HeadSHA, Status: "queued", StartedAt: now}, app: s.tokenApp(bearer(r))}
	if err := req.apply(cr, now); err != nil {
		validationError(w, err.Error())
		return
	}
	cr.suiteID = repo.appSuite(req.HeadSHA, "", "", cr.app).ID
	repo.checkRuns = append(repo.checkRuns, cr)
	writeJSON(w, http.StatusCreated, s.checkRunJSON(repo, cr))
	repo.settleAllLocked()
}

func (s *Server) updateCheckRun(w http.ResponseWriter, r *http.Request, repo *Repo) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var req checkRunRequest
	if !decodeBody(w, r, &req) {
		return
	}
	for _, cr := range repo.checkRuns {
		if cr.ID != id {
			continue
		}
		updated := *cr
		updated.Annotations = append([]Annotation(nil), cr.Annotations...)
		if err := req.apply(&updated, s.now()); err != nil {
			validationError(w, err.Error())
			return
		}
		*cr = updated
		writeJSON(w, http.StatusOK, s.checkRunJSON(repo, cr))
		repo.settleAllLocked()
		return
	}
	apiError(w, http.StatusNotFound, "Not Found")
}

func (s *Server) listCheckRuns(w http.ResponseWriter, r *http.Request, repo *Repo) {
	c, err := repo.resolve(r.PathValue("ref"))
	if err != nil {
		validationError(w, "No commit found for SHA: "+r.PathValue("ref"))
		return
	}
	sha := c.Hash.String()
	q := r.URL.Query()
	var runs []*checkRun
	type key struct {
		app  int64
		name string
	}
	latest := map[key]int{} // index in runs
	for _, cr := range repo.checkRuns {
		appID, _ := s.appOf(cr.app)
		if cr.HeadSHA != sha || (q.Get("check_name") != "" && cr.Name != q.Get("check_name")) ||
			(q.Get("status") != "" && cr.Status != q.Get("status")) ||
			(q.Get("app_id") != "" && q.Get("app_id") != strconv.FormatInt(appID, 10)) {
			continue
		}
		// filter=latest (the default) keeps the most recent run of each
		// name in each App's check suite: one App's run never replaces
		// another's.
		k := key{appID, cr.Name}
		if i, ok := latest[k]; ok && q.Get("filter") != "all" {
			runs[i] = cr
			continue
		}
		latest[k] = len(runs)
		runs = append(runs, cr)
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].ID > runs[j].ID })
	lo, hi := s.page(w, r, len(runs))
	out := []obj{}
	for _, cr := range runs[lo:hi] {
		out = append(out, s.checkRunJSON(repo, cr))
	}
	writeJSON(w, http.StatusOK, obj{"total_count": len(runs), "check_runs": out})
}

func (s *Server) listCheckSuites(w http.ResponseWriter, r *http.Request, repo *Repo) {
	c, err := repo.resolve(r.PathValue("ref"))
	if err != nil {
		validationError(w, "No commit found for SHA: "+r.PathValue("ref"))
		return
	}
	var suites []*checkSuite
	for _, cs := range repo.suites {
		if cs.HeadSHA == c.Hash.String() {
			suites = append(suites, cs)
		}
	}
	lo, hi := s.page(w, r, len(suites))
	out := []obj{}
	for _, cs := range suites[lo:hi] {
		out = append(out, s.checkSuiteJSON(repo, cs))
	}
	writeJSON(w, http.StatusOK, obj{"total_count": len(suites), "check_suites": out})
}

func (s *Server) createStatus(w http.ResponseWriter, r *http.Request, repo *Repo) {
	var req struct {
		State       string `json:"state"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
		Context     string `json:"context"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	sha := r.PathValue("sha")
	if c, err := repo.resolve(sha); err != nil || c.Hash.String() != sha {
		validationError(w, "No commit found for SHA: "+sha)
		return
	}
	if req.Context == "" {
		req.Context = "default"
	}
	st := &commitStatus{
		Status: Status{SHA: sha, State: req.State, Context: req.Context, Description: req.Description, TargetURL: req.TargetURL},
		id:     s.newID(), creator: s.AppSlug() + "[bot]", created: s.now(),
	}
	repo.statuses = append(repo.statuses, st)
	writeJSON(w, http.StatusCreated, s.statusJSON(repo, st))
	repo.settleAllLocked()
}

func (s *Server) permission(w http.ResponseWriter, r *http.Request, repo *Repo) {
	user := r.PathValue("user")
	perm := repo.perms[strings.ToLower(user)]
	if strings.EqualFold(user, repo.Owner) {
		perm = "admin"
	}
	if perm == "" {
		perm = "none"
	}
	// The legacy "permission" folds maintain into write and triage into read; role_name is exact.
	legacy := map[string]string{"maintain": "write", "triage": "read"}[perm]
	if legacy == "" {
		legacy = perm
	}
	u := s.userJSON(user)
	u["role_name"] = perm
	u["permissions"] = obj{
		"admin": perm == "admin", "maintain": perm == "admin" || perm == "maintain",
		"push": legacy == "admin" || legacy == "write", "triage": perm != "read" && perm != "none", "pull": perm != "none",
	}
	writeJSON(w, http.StatusOK, obj{"permission": legacy, "role_name": perm, "user": u})
}

func (s *Server) contents(w http.ResponseWriter, r *http.Request, repo *Repo) {
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		ref = repo.defaultBranch
	}
	c, err := repo.resolve(ref)
	if err != nil {
		apiError(w, http.StatusNotFound, "No commit found for the ref "+ref)
		return
	}
	p := strings.Trim(path.Clean("/"+r.PathValue("path")), "/")
	tree, err := c.Tree()
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	entry := func(name, p string, e object.TreeEntry, size int64) obj {
		typ := "file"
		if e.Mode == filemode.Dir {
			typ = "dir"
		}
		self := fmt.Sprintf("%s/repos/%s/contents/%s?ref=%s", s.URL, repo.FullName(), p, ref)
		git := fmt.Sprintf("%s/repos/%s/git/%ss/%s", s.URL, repo.FullName(), map[string]string{"file": "blob", "dir": "tree"}[typ], e.Hash)
		html := fmt.Sprintf("%s/%s/%s/%s/%s", s.URL, repo.FullName(), map[string]string{"file": "blob", "dir": "tree"}[typ], ref, p)
		var download any
		if typ == "file" {
			download = fmt.Sprintf("%s/%s/raw/%s/%s", s.URL, repo.FullName(), ref, p)
		}
		return obj{
			"type": typ, "size": size, "name": name, "path": p, "sha": e.Hash.String(), "url": self,
			"git_url": git, "html_url": html, "download_url": download,
			"_links": obj{"self": self, "git": git, "html": html},
		}
	}
	if sub, err := tree.Tree(p); err == nil {
		out := []obj{}
		for _, e := range sub.Entries {
			var size int64
			if e.Mode != filemode.Dir {
				if b, err := object.GetBlob(repo.st, e.Hash); err == nil {
					size = b.Size
				}
			}
			out = append(out, entry(e.Name, path.Join(p, e.Name), e, size))
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	f, err := tree.File(p)
	if err != nil {
		apiError(w, http.StatusNotFound, "Not Found")
		return
	}
	content, err := f.Contents()
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	o := entry(path.Base(p), p, object.TreeEntry{Name: path.Base(p), Mode: f.Mode, Hash: f.Hash}, f.Size)
	o["encoding"] = "base64"
	o["content"] = base64.StdEncoding.EncodeToString([]byte(content))
	writeJSON(w, http.StatusOK, o)
}
