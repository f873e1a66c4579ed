package checks

import "testing"

func TestFormatsParse(t *testing.T) {
	textJSON := Formats{FormatText, FormatJSON}
	tests := []struct {
		name    string
		allowed Formats
		in      string
		want    Format
		wantErr string
	}{
		{"offered", textJSON, "json", FormatJSON, ""},
		{"first", textJSON, "text", FormatText, ""},
		{"known but not offered", textJSON, "sarif", "", `unknown output format "sarif" (want text, json)`},
		{"case matters", textJSON, "JSON", "", `unknown output format "JSON" (want text, json)`},
		{"empty", textJSON, "", "", `unknown output format "" (want text, json)`},
		{"github", Formats{FormatText, FormatJSON, FormatSARIF, FormatGitHub}, "github", FormatGitHub, ""},
		{"help order", Formats{FormatText, FormatJSON, FormatSARIF, FormatOPM}, "yaml", "", `unknown output format "yaml" (want text, json, sarif, opm)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.allowed.Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Parse(%q) = %q, %v; want error %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Parse(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	f := FormatText
	v := Formats{FormatText, FormatSARIF}.Value(&f)
	if v.String() != "text" || v.Type() != "format" {
		t.Errorf("fresh value = %q of type %q; want the default text, type format", v.String(), v.Type())
	}
	if err := v.Set("sarif"); err != nil || f != FormatSARIF || v.String() != "sarif" {
		t.Errorf("Set(sarif) = %v, stored %q", err, f)
	}
	if err := v.Set("json"); err == nil || f != FormatSARIF {
		t.Errorf("Set(json) = %v, stored %q; want an error and the value kept", err, f)
	}
	var unbound *FormatValue
	if unbound.String() != "" {
		t.Errorf("nil value String = %q; want empty (pflag calls it on zero values)", unbound.String())
	}
}
