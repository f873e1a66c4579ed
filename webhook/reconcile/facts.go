package reconcile

import (
	"encoding/json"
	"time"
)

// The stored forms of the memos' values (see memo.persist). The names are
// part of the state's format: a rename is a migration.

type editJSON struct {
	By     string    `json:"by,omitempty"`
	At     time.Time `json:"at,omitzero"`
	Author string    `json:"author,omitempty"`
	Other  string    `json:"other,omitempty"`
}

func (e edit) MarshalJSON() ([]byte, error) {
	return json.Marshal(editJSON{By: e.by, At: e.at, Author: e.author, Other: e.other})
}

func (e *edit) UnmarshalJSON(b []byte) error {
	var j editJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = edit{by: j.By, at: j.At, author: j.Author, other: j.Other}
	return nil
}

type waitingJSON struct {
	Head  string    `json:"head"`
	Tries int       `json:"tries"`
	Next  time.Time `json:"next,omitzero"`
}

func (w waiting) MarshalJSON() ([]byte, error) {
	return json.Marshal(waitingJSON{Head: w.head, Tries: w.tries, Next: w.next})
}

func (w *waiting) UnmarshalJSON(b []byte) error {
	var j waitingJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*w = waiting{head: j.Head, tries: j.Tries, next: j.Next}
	return nil
}
