package githubtest

import (
	"sync"
	"testing"
)

// What GitHub delivers on its own: the fake's merge queue acts without the
// test (a group's checks reported, it merges or fails), and GitHub then
// tells the App's webhook. SendWebhooks subscribes a receiver, as an
// App's webhook URL, secret and events do; each event the fake raises
// itself (merge_group, pull_request dequeued by the queue, the queue's
// push) goes to the receivers subscribed to it, in order, one delivery at
// a time, signed as GitHub signs them. An event no receiver subscribed
// to is not delivered at all: an App that does not subscribe to
// merge_group never hears of a group.

// Delivery is one webhook the fake delivered on its own.
type Delivery struct {
	Event, Action string
	ID            string
	Status        int    // the receiver's answer, 0 when none came
	Err           string // why no answer came
}

// webhookSink is one subscribed receiver.
type webhookSink struct {
	url, secret string
	events      map[string]bool
	ch          chan outgoing
	done        chan struct{}
	closed      bool // under Server.mu
}

type outgoing struct {
	event, action, id string
	body              []byte
}

// sinks is the receivers of the fake's own deliveries; delivered what was
// sent, under a lock of its own, so that a delivery in flight never waits
// for the server's.
type sinks struct {
	list []*webhookSink // under Server.mu

	mu        sync.Mutex
	delivered []Delivery
}

// SendWebhooks subscribes url to the events named: the fake delivers each
// of them it raises on its own there, signed with secret, until the test
// ends. The subscription ends before anything the test set up earlier is
// cleaned up (the receiver included), once what is under way was sent.
func (s *Server) SendWebhooks(t testing.TB, url, secret string, events ...string) {
	sink := &webhookSink{url: url, secret: secret, events: map[string]bool{}, ch: make(chan outgoing, 64), done: make(chan struct{})}
	for _, e := range events {
		sink.events[e] = true
	}
	go func() {
		defer close(sink.done)
		for o := range sink.ch {
			d := Delivery{Event: o.event, Action: o.action, ID: o.id}
			resp, err := s.post(sink.url, sink.secret, o.event, o.id, o.body)
			if err != nil {
				d.Err = err.Error()
			} else {
				d.Status = resp.StatusCode
			}
			s.hooks.mu.Lock()
			s.hooks.delivered = append(s.hooks.delivered, d)
			s.hooks.mu.Unlock()
		}
	}()
	s.mu.Lock()
	s.hooks.list = append(s.hooks.list, sink)
	s.mu.Unlock()
	t.Cleanup(func() {
		s.mu.Lock()
		sink.closed = true
		close(sink.ch)
		s.mu.Unlock()
		<-sink.done
	})
}

// Delivered lists the webhooks the fake delivered on its own so far,
// oldest first.
func (s *Server) Delivered() []Delivery {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	return append([]Delivery(nil), s.hooks.delivered...)
}

// sendLocked raises event.action: its payload goes to every receiver
// subscribed to event. A payload that cannot be made fails the test.
func (s *Server) sendLocked(r *Repo, event, action string, args PayloadArgs) {
	var body []byte
	for _, sink := range s.hooks.list {
		if sink.closed || !sink.events[event] {
			continue
		}
		if body == nil {
			var err error
			if body, err = s.payloadLocked(event, action, args); err != nil {
				s.t.Errorf("githubtest: %s: %v", r.FullName(), err)
				return
			}
		}
		sink.ch <- outgoing{event: event, action: action, id: NewDeliveryID(), body: body}
	}
}
