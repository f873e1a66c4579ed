package owners

import (
	"strings"
)

// NormLogin is the form logins and alias names are compared in: lower case,
// without a leading "@". GitHub logins are case-insensitive, and OWNERS files
// often copy them from mentions. Two logins are the same person only when
// their normal forms are equal; a login never matches part of another.
func NormLogin(login string) string {
	return strings.TrimPrefix(strings.ToLower(login), "@")
}

// IsBot reports whether login belongs to a bot whose comments and reviews
// never count: any GitHub App ("name[bot]") and the logins listed in bots
// (the app itself, in whichever spelling the caller knows it by).
func IsBot(login string, bots []string) bool {
	n := NormLogin(login)
	if strings.HasSuffix(n, "[bot]") {
		return true
	}
	for _, b := range bots {
		b = NormLogin(b)
		if n == b || n+"[bot]" == b || n == b+"[bot]" {
			return true
		}
	}
	return false
}

// validLogin reports whether a normalised name can be a GitHub login:
// letters, digits and hyphens, not starting with a hyphen, at most 39
// characters. (GitHub forbids more today, such as double hyphens, but some
// old accounts have them.)
func validLogin(n string) bool {
	if n == "" || len(n) > 39 || n[0] == '-' {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// aliasSuffixes end the names that OWNERS_ALIASES files conventionally
// define. A name with one of them that is not defined is most likely an alias
// that was removed or misspelt, not a person.
var aliasSuffixes = []string{
	"-approvers", "-reviewers", "-maintainers", "-leads", "-owners", "-admins",
	"-chairs", "-team", "-committers", "-emeritus",
}

func aliasLike(n string) bool {
	for _, s := range aliasSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}
