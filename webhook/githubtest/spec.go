package githubtest

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// specJSON is GitHub's OpenAPI description restricted to the operations the fake serves: the
// shared subset plus operations copied verbatim from the full description by internal/specsubset.
//
//go:embed testdata/github-bot.openapi.json
var specJSON []byte

// specValidator validates requests and responses against the description.
type specValidator struct {
	router routers.Router
}

var (
	specOnce   sync.Once
	specShared *specValidator
	specErr    error
)

// loadSpec parses the description once per process: it is large and never changes.
func loadSpec() (*specValidator, error) {
	specOnce.Do(func() {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(specJSON)
		if err != nil {
			specErr = fmt.Errorf("loading the OpenAPI description: %w", err)
			return
		}
		if err := doc.Validate(context.Background(), openapi3.DisableExamplesValidation()); err != nil {
			specErr = fmt.Errorf("the OpenAPI description is invalid: %w", err) // GitHub's own examples are not checked: some do not match their schemas
			return
		}
		router, err := gorillamux.NewRouter(doc)
		if err != nil {
			specErr = fmt.Errorf("routing the OpenAPI description: %w", err)
			return
		}
		specShared = &specValidator{router: router}
	})
	return specShared, specErr
}

// operation is a request matched to an operation of the description.
type operation struct {
	route  *routers.Route
	params map[string]string
}

// asGitHub rewrites a request to the fake into the same request to the description's server
// (https://api.github.com), which is what the router matches.
func asGitHub(r *http.Request, body []byte) *http.Request {
	c := r.Clone(context.Background())
	u := *r.URL
	u.Scheme, u.Host = "https", "api.github.com"
	c.URL = &u
	c.Host = u.Host
	c.Body = io.NopCloser(bytes.NewReader(body))
	return c
}

// slashParams are the paths whose last parameter GitHub lets hold slashes (a ref is
// heads/NAME, a branch may be a/b), which an OpenAPI path template cannot say: the
// router is asked with the slashes of that parameter escaped, and the operation
// sees the value as sent.
var slashParams = regexp.MustCompile(`^(/repos/[^/]+/[^/]+/git/refs?/)(.+)$`)

func (v *specValidator) findRoute(r *http.Request) (*operation, error) {
	req := asGitHub(r, nil)
	var slashed string
	if m := slashParams.FindStringSubmatch(req.URL.Path); m != nil && strings.Contains(m[2], "/") {
		slashed = m[2]
		u := *req.URL
		u.Path = m[1] + strings.ReplaceAll(m[2], "/", "~")
		u.RawPath = ""
		req.URL = &u
	}
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		return nil, fmt.Errorf("no operation for %s %s: %w", r.Method, r.URL.Path, err)
	}
	if slashed != "" {
		for k, p := range params {
			if p == strings.ReplaceAll(slashed, "/", "~") {
				params[k] = slashed
			}
		}
	}
	// Path parameters arrive escaped from the router; the operation sees them decoded.
	for k, p := range params {
		if u, err := url.PathUnescape(p); err == nil {
			params[k] = u
		}
	}
	return &operation{route: route, params: params}, nil
}

func (v *specValidator) options() *openapi3filter.Options {
	return &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{
			openapi3.EnableFormatValidation(),
		},
	}
}

func (v *specValidator) input(r *http.Request, body []byte, op *operation) *openapi3filter.RequestValidationInput {
	return &openapi3filter.RequestValidationInput{
		Request:    asGitHub(r, body),
		PathParams: op.params,
		Route:      op.route,
		Options:    v.options(),
	}
}

func (v *specValidator) validateRequest(r *http.Request, body []byte, op *operation) error {
	return openapi3filter.ValidateRequest(context.Background(), v.input(r, body, op))
}

// genericStatus are replies GitHub may give to any operation although the description does not
// list them for each: authentication and permission failures (403, e.g. editing another user's
// comment without write access), conditional-request hits, validation failures
// (GitHub's 422 "Validation Failed", e.g. a check run for an unknown SHA) and outages. Their bodies
// are still validated when the operation does describe them.
var genericStatus = map[int]bool{
	http.StatusNotModified: true, http.StatusUnauthorized: true, http.StatusForbidden: true, http.StatusUnprocessableEntity: true,
	http.StatusInternalServerError: true, http.StatusBadGateway: true, http.StatusServiceUnavailable: true,
}

func (v *specValidator) validateResponse(r *http.Request, reqBody []byte, op *operation, resp *Response) error {
	opts := v.options()
	if genericStatus[resp.Status] && op.route.Operation.Responses.Status(resp.Status) == nil {
		opts.IncludeResponseStatus = false
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: v.input(r, reqBody, op),
		Status:                 resp.Status,
		Header:                 resp.Header,
		Options:                opts,
	}
	in.SetBodyBytes(resp.Body)
	return openapi3filter.ValidateResponse(context.Background(), in)
}
