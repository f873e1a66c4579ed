package checks

// Severity says how much a finding matters. Only errors fail a check.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityNote    Severity = "note"
)

// Finding is one problem found by a check, placed as precisely as the input
// allows. File is slash-separated and relative to the checked root; Line is
// 1-based and 0 when unknown.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	File     string   `json:"file,omitempty"`
	Line     int      `json:"line,omitempty"`
	Package  string   `json:"package,omitempty"`
	Channel  string   `json:"channel,omitempty"`
	Bundle   string   `json:"bundle,omitempty"`
	Message  string   `json:"message"`
}

// Rule describes a rule id for reporters that publish a rule catalogue
// (SARIF's tool.driver.rules).
type Rule struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}
