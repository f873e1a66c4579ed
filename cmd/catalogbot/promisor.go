package main

import (
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
)

// fetchMissing sets whether reads of a partial clone (an Action's
// checkout with a filter, a developer's blobless clone) fetch the objects
// it left with its promisor remote, for check and backtest: through git,
// within change's default bounds, and only from an address the egress
// rule lets the registry clients dial (allowPrivate as for registries).
func (a *app) fetchMissing(on bool, allowPrivate []string) error {
	rule, err := egress.New(allowPrivate, a.resolver)
	if err != nil {
		return err
	}
	change.SetFetch(change.FetchOptions{Enabled: on, Dial: rule.Transport(egress.Timeouts{}).DialContext})
	return nil
}
