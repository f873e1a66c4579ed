package pipeline

import (
	"errors"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
)

// contact is what a failed contact with a registry that a pull request
// names means for the check that made it. The references and templates
// checks both sort their render failures with sortContact, so that they
// cannot disagree on which failures judge and which wait.
type contact struct {
	// refused is the egress rule's refusal of the host: a verdict that
	// names the rule, never what the host would have said.
	refused *egress.RefusedError
	// wait is set when the registry did not answer (a timeout, a 429 or
	// 5xx, a connection that failed, a host the breaker holds back): it
	// has said nothing, so the check waits for it, with no finding.
	wait *checks.Wait
	// answered is an answer without the image (401, 403, 404): a
	// verdict, worded by registry.Explain.
	answered bool
}

// sortContact sorts err from a contact with host. The order matters: a
// refused dial fails like any connection, so the refusal is looked for
// first.
func sortContact(host string, err error) contact {
	var refused *egress.RefusedError
	if errors.As(err, &refused) {
		return contact{refused: refused}
	}
	if class, ok := registry.Unanswered(err); ok {
		return contact{wait: &checks.Wait{Registry: host, Class: string(class), Count: 1}}
	}
	_, _, answered := registry.Explain(err)
	return contact{answered: answered}
}
