package sign

import (
	"encoding/json"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/checks/fbc"
)

// The in-toto statement type and the predicate types catalogbot attests.
const (
	StatementType = "https://in-toto.io/Statement/v1"
	// ApprovalPredicateType is catalogbot's own: who approved what went
	// into a catalog image. Verify with cosign verify-attestation --type
	// and this URI.
	ApprovalPredicateType = "https://catalogbot.dev/attestation/approval/v1"
	// ProvenancePredicateType is SLSA provenance v1 (cosign's --type
	// slsaprovenance1).
	ProvenancePredicateType = "https://slsa.dev/provenance/v1"
	// BuildType is the SLSA build type of a catalogbot image build: the
	// external parameters are ProvenanceParameters.
	BuildType = "https://catalogbot.dev/build/catalog-image/v1"
	// BuilderID names catalogbot, whichever front end published, as
	// the provenance's builder; the version goes beside it.
	BuilderID = "https://github.com/catalogbot/catalogbot"
)

// Statement is an in-toto statement (v1) about one image.
type Statement struct {
	Type          string          `json:"_type"`
	Subject       []Subject       `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

// Subject names an artifact by digest.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// NewStatement is the statement that predicate (marshalled to JSON) of
// predicateType holds for the image digest.
func NewStatement(digest name.Digest, predicateType string, predicate any) (*Statement, error) {
	raw, err := json.Marshal(predicate)
	if err != nil {
		return nil, err
	}
	alg, hex, _ := strings.Cut(digest.DigestStr(), ":")
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: digest.Context().Name(), Digest: map[string]string{alg: hex}}},
		PredicateType: predicateType,
		Predicate:     raw,
	}, nil
}

// Approval is the predicate of the approval attestation: what decided the
// content of the catalog image since the previous publication.
type Approval struct {
	// Repository is the catalog repository (owner/name or a URL) and
	// Commit the commit published.
	Repository string `json:"repository,omitempty"`
	Commit     string `json:"commit,omitempty"`
	// Catalog is the catalog's name in the repository ("" for the one
	// catalog of a policy without a catalogs list) and Image the target
	// it was published to: what a verifier compares with the image it
	// asked about, so that another catalog's signed image under this
	// tag is not taken for this one's.
	Catalog string `json:"catalog,omitempty"`
	Image   string `json:"image,omitempty"`
	// Published is when the publication was attested (RFC 3339, UTC, to
	// the nanosecond): of the signed publications of one target, the
	// latest is the one its tag must serve, and an older one under the
	// tag is a rollback.
	Published string `json:"published,omitempty"`
	// Catalogd is what catalogd will serve for the image at /api/v1/all:
	// the size and digest of the JSON Lines every client of the catalog
	// downloads, and its number of objects.
	Catalogd *fbc.ServedView `json:"catalogd,omitempty"`
	// Previous is the commit and digest of the previous publication,
	// when known: the packages below changed since then.
	Previous *Publication `json:"previous,omitempty"`
	// Policy is the revision of the policy file the publish used.
	Policy Revision `json:"policy"`
	// ApprovalsRecorded says whether Packages holds who approved each
	// change. A publish outside the App (the CLI, a workflow) knows the
	// commit and the policy, not the reviews: false, and Note says so.
	ApprovalsRecorded bool      `json:"approvalsRecorded"`
	Note              string    `json:"note,omitempty"`
	Packages          []Package `json:"packages"`
	// Unpackaged are the pull requests merged since the previous
	// publication that changed no package (OWNERS files, the policy).
	Unpackaged []PullRequest `json:"unpackaged,omitempty"`
	// Checks are the checks the publish itself passed (the catalog's
	// validation).
	Checks []Check `json:"checks"`
}

// Publication is one earlier publication of the catalog.
type Publication struct {
	Commit string `json:"commit,omitempty"`
	Digest string `json:"digest,omitempty"`
}

// Revision is a file at a commit: its path and the git object id of its
// content (the blob), and the commit it was read at.
type Revision struct {
	Path   string `json:"path"`
	Blob   string `json:"blob,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// Package is one package changed since the previous publication and the
// pull requests that changed it.
type Package struct {
	Name         string        `json:"name"`
	PullRequests []PullRequest `json:"pullRequests"`
}

// PullRequest is one merged pull request and its approval.
type PullRequest struct {
	Number int    `json:"number"`
	Head   string `json:"head"`
	Merge  string `json:"merge,omitempty"`
	Author string `json:"author,omitempty"`
	// Approvers are who approved the head, and Owners the OWNERS or
	// ci.yaml files (at the base revision) that made them approvers.
	Approvers []string   `json:"approvers"`
	Owners    []Revision `json:"owners"`
	// Checks are the checks that passed on the head.
	Checks []Check `json:"checks"`
}

// Check is a check that passed on the published commit.
type Check struct {
	Name       string `json:"name"`
	Conclusion string `json:"conclusion"`
}

// Provenance is a SLSA provenance v1 predicate.
type Provenance struct {
	BuildDefinition BuildDefinition `json:"buildDefinition"`
	RunDetails      RunDetails      `json:"runDetails"`
}

// BuildDefinition is SLSA's: what was built, from what.
type BuildDefinition struct {
	BuildType            string               `json:"buildType"`
	ExternalParameters   ProvenanceParameters `json:"externalParameters"`
	ResolvedDependencies []ResourceDescriptor `json:"resolvedDependencies"`
}

// ProvenanceParameters are the inputs of a catalog image build, enough to
// rebuild it: the source at a commit, the base by digest, the platforms,
// the created time, and the references of an assembled catalog.
type ProvenanceParameters struct {
	Source Source `json:"source"`
	// Catalog is the catalog's name in the repository, "" for the one
	// catalog of a policy without a catalogs list.
	Catalog string `json:"catalog,omitempty"`
	Image   string `json:"image"`
	// Base is the base as configured (opm, scratch or a reference) and
	// OPMImage the image opm stands for; BaseName and BaseDigest are
	// what the base resolved to, empty for scratch.
	Base       string            `json:"base"`
	OPMImage   string            `json:"opmImage,omitempty"`
	BaseName   string            `json:"baseName,omitempty"`
	BaseDigest string            `json:"baseDigest,omitempty"`
	Platforms  []string          `json:"platforms,omitempty"`
	Epoch      int64             `json:"sourceDateEpoch"`
	Refs       map[string]string `json:"references,omitempty"`
	// Catalogd is the catalog as catalogd serves it, recorded in the
	// image's annotations too; absent for images built before that, which
	// a rebuild reproduces without those annotations.
	Catalogd *fbc.ServedView `json:"catalogd,omitempty"`
}

// Source is where the catalog came from.
type Source struct {
	Repository string `json:"repository,omitempty"`
	Commit     string `json:"commit,omitempty"`
	// Path is what was published in the repository: a catalog
	// directory, a reference list or "." for the policy's choice.
	Path string `json:"path,omitempty"`
}

// ResourceDescriptor is SLSA's reference to an input.
type ResourceDescriptor struct {
	URI    string            `json:"uri,omitempty"`
	Name   string            `json:"name,omitempty"`
	Digest map[string]string `json:"digest,omitempty"`
}

// RunDetails is SLSA's: who built it.
type RunDetails struct {
	Builder  Builder  `json:"builder"`
	Metadata Metadata `json:"metadata"`
}

// Builder identifies the builder.
type Builder struct {
	ID      string            `json:"id"`
	Version map[string]string `json:"version,omitempty"`
}

// Metadata is SLSA's run metadata.
type Metadata struct {
	InvocationID string `json:"invocationId,omitempty"`
	StartedOn    string `json:"startedOn,omitempty"`
	FinishedOn   string `json:"finishedOn,omitempty"`
}
