package platform

import (
	"os/exec"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    string // the platform's String(), when valid
		wantErr string
	}{
		{"linux/amd64", "linux/amd64", ""},
		{"linux/arm64/v8", "linux/arm64/v8", ""},
		{"linux/arm/v7", "linux/arm/v7", ""},
		{"linux/amd64/v3", "linux/amd64/v3", ""},
		{"linux/s390x", "linux/s390x", ""},
		{"windows/amd64:10.0.17763.1234", "windows/amd64:10.0.17763.1234", ""},
		{"linux/amd46", "", `platform "linux/amd46": unknown architecture "amd46" for linux (did you mean linux/amd64?)`},
		{"linux/x86_64", "", `platform "linux/x86_64": unknown architecture "x86_64" for linux`},
		{"linx/amd64", "", `platform "linx/amd64": unknown operating system "linx" (did you mean linux?)`},
		{"linux/arm/v9", "", `platform "linux/arm/v9": unknown variant "v9" of arm (known: v5, v6, v7, v8)`},
		{"linux/s390x/v1", "", `platform "linux/s390x/v1": s390x has no variants; write linux/s390x`},
		{"linux", "", `platform "linux": want os/arch or os/arch/variant, such as linux/amd64`},
		{"linux/arm64/v8/x", "", `platform "linux/arm64/v8/x": want os/arch or os/arch/variant, such as linux/amd64`},
		{"", "", `platform "": want os/arch or os/arch/variant, such as linux/amd64`},
	}
	for _, tt := range tests {
		p, err := Parse(tt.in)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Parse(%q): %v", tt.in, err)
		case tt.wantErr == "" && p.String() != tt.want:
			t.Errorf("Parse(%q) = %s, want %s", tt.in, p.String(), tt.want)
		case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
			t.Errorf("Parse(%q) error = %v, want %s", tt.in, err, tt.wantErr)
		}
	}
}

func TestParseList(t *testing.T) {
	if _, err := ParseList([]string{"linux/amd64", "linux/arm64", "linux/amd64"}); err == nil || err.Error() != "platform linux/amd64 given twice" {
		t.Errorf("duplicate: %v", err)
	}
	ps, err := ParseList([]string{"linux/amd64", "linux/arm64"})
	if err != nil || len(ps) != 2 {
		t.Errorf("ParseList = %v, %v", ps, err)
	}
}

// TestDistList checks the embedded list against the Go on PATH, so a port
// that Go adds or drops is noticed.
func TestDistList(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(goBin, "tool", "dist", "list").Output()
	if err != nil {
		t.Fatalf("go tool dist list: %v", err)
	}
	if got, want := strings.Fields(dist), strings.Fields(string(out)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("checks/platform/dist.txt differs from go tool dist list; regenerate it with\n\tgo tool dist list > checks/platform/dist.txt\nembedded: %v\ngo:       %v", got, want)
	}
}
