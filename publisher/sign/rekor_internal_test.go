package sign

import (
	"context"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/publisher/sign/signtest"
)

// TestUploadAgain: the same signature uploaded twice (a publish retried
// after the log answered and the registry did not) gets the entry the log
// holds, read from where the log's 409 says it is.
func TestUploadAgain(t *testing.T) {
	rekor := signtest.NewRekor(t)
	s, _, err := newEphemeral()
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte(`{"critical":{}}`)
	sig, err := s.signMessage(context.Background(), payload)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := s.PublicKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	log := &Rekor{URL: rekor.URL}
	first, err := log.upload(context.Background(), hashedRekordEntry(payload, sig, pub))
	if err != nil {
		t.Fatal(err)
	}
	again, err := log.upload(context.Background(), hashedRekordEntry(payload, sig, pub))
	if err != nil {
		t.Fatal(err)
	}
	if again.Payload != first.Payload || string(again.SignedEntryTimestamp) != string(first.SignedEntryTimestamp) || len(rekor.Entries()) != 1 {
		t.Fatalf("again = %+v, first = %+v, %d entries", again, first, len(rekor.Entries()))
	}
	// A log that refuses says which log and why.
	_, err = log.upload(context.Background(), hashedRekordEntry(payload, []byte("not a signature"), pub))
	if err == nil || !strings.Contains(err.Error(), "transparency log "+rekor.URL+": 400 Bad Request: the signature does not verify") {
		t.Fatalf("a bad signature: %v", err)
	}
}
