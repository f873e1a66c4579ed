package githubtest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The git data API (blobs, trees, commits, refs) and pull request creation, update and labels:
// what a client that writes commits without a clone needs (the App's proposals). Objects are
// written into the repository's real object store, so a branch moved through the refs API is
// fetched over git like any other, and moving a pull request's head branch updates the pull
// request as a push does.

func (s *Server) gitDataRoutes(m *http.ServeMux) {
	m.HandleFunc("POST /repos/{owner}/{repo}/git/blobs", s.repo(s.createBlob))
	m.HandleFunc("POST /repos/{owner}/{repo}/git/trees", s.repo(s.createTree))
	m.HandleFunc("POST /repos/{owner}/{repo}/git/commits", s.repo(s.createCommit))
	m.HandleFunc("GET /repos/{owner}/{repo}/git/ref/{ref...}", s.repo(s.getRef))
	m.HandleFunc("POST /repos/{owner}/{repo}/git/refs", s.repo(s.createRef))
	m.HandleFunc("PATCH /repos/{owner}/{repo}/git/refs/{ref...}", s.repo(s.updateRef))
	m.HandleFunc("POST /repos/{owner}/{repo}/pulls", s.repo(s.createPull))
	m.HandleFunc("PATCH /repos/{owner}/{repo}/pulls/{n}", s.repo(s.pull(s.updatePull)))
	m.HandleFunc("POST /repos/{owner}/{repo}/issues/{n}/labels", s.repo(s.pull(s.addLabels)))
}

func (s *Server) createBlob(w http.ResponseWriter, r *http.Request, repo *Repo) {
	var req struct {
		Content  string `json:"content"`
		Encoding string `json:"encoding"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	content := req.Content
	switch req.Encoding {
	case "", "utf-8":
	case "base64":
		b, err := base64.StdEncoding.DecodeString(req.Content)
		if err != nil {
			validationError(w, "content is not valid base64")
			return
		}
		content = string(b)
	default:
		validationError(w, "encoding must be utf-8 or base64")
		return
	}
	h, err := writeBlob(repo.st, content)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	url := s.URL + "/repos/" + repo.FullName() + "/git/blobs/" + h.String()
	w.Header().Set("Location", url)
	writeJSON(w, http.StatusCreated, obj{"url": url, "sha": h.String()})
}

// createTree builds a tree from base_tree (or nothing) with the entries given by path, nested
// paths creating or editing subtrees, a null sha deleting, as GitHub does.
func (s *Server) createTree(w http.ResponseWriter, r *http.Request, repo *Repo) {
	var req struct {
		BaseTree string `json:"base_tree"`
		Tree     []struct {
			Path    string  `json:"path"`
			Mode    string  `json:"mode"`
			Type    string  `json:"type"`
			SHA     *string `json:"sha"`
			Content *string `json:"content"`
		} `json:"tree"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	files := map[string]blobEntry{}
	if req.BaseTree != "" {
		var err error
		if files, err = flatten(repo.st, plumbing.NewHash(req.BaseTree)); err != nil {
			validationError(w, "base_tree "+req.BaseTree+" is not a tree")
			return
		}
	}
	for _, e := range req.Tree {
		p := strings.Trim(path.Clean("/"+e.Path), "/")
		if p == "" || p != e.Path {
			validationError(w, fmt.Sprintf("tree.path %q is not a clean relative path", e.Path))
			return
		}
		if e.Type != "blob" {
			// Submodules and whole subtrees are not needed by any client of the fake.
			validationError(w, fmt.Sprintf("tree.type %q: the fake takes blobs only", e.Type))
			return
		}
		mode := filemode.Regular
		switch e.Mode {
		case "100644":
		case "100755":
			mode = filemode.Executable
		case "120000":
			mode = filemode.Symlink
		default:
			validationError(w, fmt.Sprintf("tree.mode %q is not a blob's mode", e.Mode))
			return
		}
		switch {
		case e.Content != nil:
			h, err := writeBlob(repo.st, *e.Content)
			if err != nil {
				apiError(w, http.StatusInternalServerError, err.Error())
				return
			}
			files[p] = blobEntry{hash: h, mode: mode}
		case e.SHA == nil:
			delete(files, p)
		default:
			h := plumbing.NewHash(*e.SHA)
			if _, err := repo.st.EncodedObject(plumbing.BlobObject, h); err != nil {
				validationError(w, fmt.Sprintf("tree.sha %s is not a blob", *e.SHA))
				return
			}
			files[p] = blobEntry{hash: h, mode: mode}
		}
	}
	h, err := writeTree(repo.st, files)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	t, err := object.GetTree(repo.st, h)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	api := s.URL + "/repos/" + repo.FullName() + "/git/"
	entries := []obj{}
	for _, e := range t.Entries {
		typ, kind := "blob", "blobs"
		if e.Mode == filemode.Dir {
			typ, kind = "tree", "trees"
		}
		entries = append(entries, obj{"path": e.Name, "mode": fmt.Sprintf("%06o", uint32(e.Mode)), "type": typ, "sha": e.Hash.String(), "url": api + kind + "/" + e.Hash.String()})
	}
	w.Header().Set("Location", api+"trees/"+h.String())
	writeJSON(w, http.StatusCreated, obj{"sha": h.String(), "url": api + "trees/" + h.String(), "truncated": false, "tree": entries})
}

func (s *Server) createCommit(w http.ResponseWriter, r *http.Request, repo *Repo) {
	var req struct {
		Message string   `json:"message"`
		Tree    string   `json:"tree"`
		Parents []string `json:"parents"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if _, err := object.GetTree(repo.st, plumbing.NewHash(req.Tree)); err != nil {
		validationError(w, "tree "+req.Tree+" is not a tree")
		return
	}
	var parents []plumbing.Hash
	for _, p := range req.Parents {
		h := plumbing.NewHash(p)
		if _, err := object.GetCommit(repo.st, h); err != nil {
			validationError(w, "parent "+p+" is not a commit")
			return
		}
		parents = append(parents, h)
	}
	h, err := writeCommit(repo.st, plumbing.NewHash(req.Tree), parents, req.Message, s.actor(bearer(r)), s.now())
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	c, err := object.GetCommit(repo.st, h)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	api := s.URL + "/repos/" + repo.FullName() + "/git/"
	parentsJSON := []obj{}
	for _, p := range c.ParentHashes {
		parentsJSON = append(parentsJSON, obj{"sha": p.String(), "url": api + "commits/" + p.String(), "html_url": s.URL + "/" + repo.FullName() + "/commit/" + p.String()})
	}
	sig := func(sg object.Signature) obj {
		return obj{"name": sg.Name, "email": sg.Email, "date": ts(sg.When)}
	}
	w.Header().Set("Location", api+"commits/"+h.String())
	writeJSON(w, http.StatusCreated, obj{
		"sha": h.String(), "node_id": nodeID("C_", int64(h[0])<<8|int64(h[1])), "url": api + "commits/" + h.String(),
		"html_url": s.URL + "/" + repo.FullName() + "/commit/" + h.String(),
		"author":   sig(c.Author), "committer": sig(c.Committer), "message": c.Message,
		"tree":         obj{"sha": c.TreeHash.String(), "url": api + "trees/" + c.TreeHash.String()},
		"parents":      parentsJSON,
		"verification": obj{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil},
	})
}

// refJSON is a git-ref object.
func (s *Server) refJSON(repo *Repo, name plumbing.ReferenceName, h plumbing.Hash) obj {
	api := s.URL + "/repos/" + repo.FullName() + "/git/"
	return obj{
		"ref": name.String(), "node_id": nodeID("REF_", int64(len(name))), "url": api + name.String(),
		"object": obj{"type": "commit", "sha": h.String(), "url": api + "commits/" + h.String()},
	}
}

// branchOfRef is the branch of "heads/NAME" (the refs API's spelling) or "refs/heads/NAME"; the
// fake serves branches only.
func branchOfRef(ref string) (string, bool) {
	ref = strings.TrimPrefix(ref, "refs/")
	b, ok := strings.CutPrefix(ref, "heads/")
	return b, ok && b != "" && plumbing.NewBranchReferenceName(b).Validate() == nil
}

func (s *Server) getRef(w http.ResponseWriter, r *http.Request, repo *Repo) {
	b, ok := branchOfRef(r.PathValue("ref"))
	tip, found := repo.tip(b)
	if !ok || !found {
		apiError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, s.refJSON(repo, plumbing.NewBranchReferenceName(b), tip))
}

func (s *Server) createRef(w http.ResponseWriter, r *http.Request, repo *Repo) {
	var req struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	b, ok := branchOfRef(req.Ref)
	if !ok || !strings.HasPrefix(req.Ref, "refs/") {
		validationError(w, "ref must be refs/heads/NAME")
		return
	}
	if _, exists := repo.tip(b); exists {
		validationError(w, "Reference already exists")
		return
	}
	h := plumbing.NewHash(req.SHA)
	if _, err := object.GetCommit(repo.st, h); err != nil {
		validationError(w, "Object does not exist")
		return
	}
	if err := repo.moveBranch(b, h); err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Location", s.URL+"/repos/"+repo.FullName()+"/git/refs/heads/"+b)
	writeJSON(w, http.StatusCreated, s.refJSON(repo, plumbing.NewBranchReferenceName(b), h))
}

// updateRef moves a branch; without force only forward, as GitHub refuses a move that is not a
// fast-forward.
func (s *Server) updateRef(w http.ResponseWriter, r *http.Request, repo *Repo) {
	var req struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	b, ok := branchOfRef(r.PathValue("ref"))
	old, found := repo.tip(b)
	if !ok || !found {
		validationError(w, "Reference does not exist")
		return
	}
	h := plumbing.NewHash(req.SHA)
	if _, err := object.GetCommit(repo.st, h); err != nil {
		validationError(w, "Object does not exist")
		return
	}
	if !req.Force {
		if ff, err := repo.isAncestor(old, h); err != nil || !ff {
			validationError(w, "Update is not a fast forward")
			return
		}
	}
	if err := repo.moveBranch(b, h); err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, s.refJSON(repo, plumbing.NewBranchReferenceName(b), h))
}

// createPull opens a pull request by the token's actor (the App's bot for an installation token)
// from a branch of the repository itself.
func (s *Server) createPull(w http.ResponseWriter, r *http.Request, repo *Repo) {
	var req struct {
		Title string `json:"title"`
		Head  string `json:"head"`
		Base  string `json:"base"`
		Body  string `json:"body"`
		Draft bool   `json:"draft"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	head := req.Head
	if owner, b, ok := strings.Cut(head, ":"); ok {
		if !strings.EqualFold(owner, repo.Owner) {
			validationError(w, "head: pull requests from forks are not modelled")
			return
		}
		head = b
	}
	sha, ok := repo.tip(head)
	if !ok {
		validationError(w, "head: no branch "+req.Head)
		return
	}
	baseSHA, ok := repo.tip(req.Base)
	if !ok {
		validationError(w, "base: no branch "+req.Base)
		return
	}
	if req.Title == "" {
		validationError(w, "title is missing")
		return
	}
	if sha == baseSHA {
		validationError(w, "No commits between "+req.Base+" and "+req.Head)
		return
	}
	for _, pr := range repo.prs {
		if pr.state == "open" && pr.headRef == head && pr.baseRef == req.Base {
			validationError(w, "A pull request already exists for "+repo.Owner+":"+head+".")
			return
		}
	}
	now := s.now()
	pr := &PR{
		r: repo, Number: repo.nextNumber, ID: s.newID(), author: s.actor(bearer(r)), headRef: head, baseRef: req.Base,
		headSHA: sha.String(), state: "open", title: req.Title, body: req.Body, draft: req.Draft, created: now, updated: now,
	}
	pr.headChanges = []HeadChange{{Action: "opened", SHA: pr.headSHA, At: now}}
	repo.nextNumber++
	repo.prs[pr.Number] = pr
	if err := repo.st.SetReference(plumbing.NewHashReference(pullRef(pr.Number), sha)); err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if err := pr.recordPushLocked(plumbing.ZeroHash, sha); err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	repo.suiteFor(sha.String(), head, "")
	w.Header().Set("Location", fmt.Sprintf("%s/repos/%s/pulls/%d", s.URL, repo.FullName(), pr.Number))
	writeJSON(w, http.StatusCreated, s.pullJSON(pr, true))
}

func (s *Server) updatePull(w http.ResponseWriter, r *http.Request, repo *Repo, pr *PR) {
	var req struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if req.Title != nil {
		pr.title = *req.Title
	}
	if req.Body != nil {
		pr.body = *req.Body
	}
	if req.State != nil && *req.State != pr.state {
		switch {
		case pr.merged:
			validationError(w, "a merged pull request cannot be reopened")
			return
		case *req.State == "closed":
			pr.state, pr.closedAt = "closed", s.now()
		case *req.State == "open":
			pr.state, pr.closedAt = "open", time.Time{}
		}
	}
	pr.updated = s.now()
	writeJSON(w, http.StatusOK, s.pullJSON(pr, true))
}

// addLabels adds labels to the pull request (GitHub creates a label the repository lacks) and
// returns all of its labels.
func (s *Server) addLabels(w http.ResponseWriter, r *http.Request, repo *Repo, pr *PR) {
	var req struct {
		Labels []string `json:"labels"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	for _, l := range req.Labels {
		if !slices.Contains(pr.labels, l) {
			pr.labels = append(pr.labels, l)
		}
	}
	pr.updated = s.now()
	out := []obj{}
	for _, l := range pr.labels {
		out = append(out, s.labelJSON(repo, l))
	}
	writeJSON(w, http.StatusOK, out)
}

// Labels are the pull request's labels.
func (pr *PR) Labels() (l []string) { pr.locked(func() { l = slices.Clone(pr.labels) }); return }

// Title and Body are the pull request's.
func (pr *PR) Title() (t string) { pr.locked(func() { t = pr.title }); return }
func (pr *PR) Body() (b string)  { pr.locked(func() { b = pr.body }); return }

// TreeOf is the tree of commit sha ("" when sha is no commit), for the base_tree of a tree made
// through the API.
func (r *Repo) TreeOf(sha string) string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	c, err := object.GetCommit(r.st, plumbing.NewHash(sha))
	if err != nil {
		return ""
	}
	return c.TreeHash.String()
}
