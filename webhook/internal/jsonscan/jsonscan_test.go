package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGrammar holds Skip to encoding/json's verdict on valid and broken
// texts alike: routing relies on refusing what the standard library
// refuses.
func TestGrammar(t *testing.T) {
	texts := []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0.5e+10`, `"a\u00e9\n"`,
		`{"a":[1,{"b":null}],"c":"d"}`, ` { "a" : 1 } `,
		`{`, `{"a"}`, `{"a":}`, `[1,]`, `01`, `1.`, `-`, `"\x"`, `"\u12"`, "\"a\x01\"",
		`nul`, `{"a":1}}`, `[1 2]`, `"unterminated`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	}
	for _, text := range texts {
		s := New([]byte(text))
		err := s.Skip(0)
		ok := err == nil && s.AtEnd()
		if want := json.Valid([]byte(text)); ok != want {
			t.Errorf("%.40q: jsonscan says valid=%v (%v), encoding/json %v", text, ok, err, want)
		}
	}
}

func TestFields(t *testing.T) {
	s := New([]byte(`{"n": 42, "s": "x\u0041", "skip": {"deep": [1, 2]}, "null": null}`))
	var n int
	var str string
	err := s.Object(0, func(key []byte) error {
		switch string(key) {
		case "n":
			return s.IntInto(&n)
		case "s":
			return s.StrInto(&str)
		case "null":
			return s.StrInto(&str)
		}
		return s.Skip(1)
	})
	if err != nil || n != 42 || str != "xA" || !s.AtEnd() {
		t.Errorf("got n=%d s=%q err=%v", n, str, err)
	}
}
