package gate

import (
	"unicode"
	"unicode/utf8"
)

// Password rules of the spec, in the order the UI lists them.
const (
	RuleLength    = "length"
	RuleNumber    = "number"
	RuleLowercase = "lowercase"
	RuleUppercase = "uppercase"
	RuleSpecial   = "special"
)

// Password length bounds of the spec, in characters.
const (
	PasswordMin = 6
	PasswordMax = 15
)

// RuleMessages are the English messages of the rules (the UI shows its own translations keyed by rule).
var RuleMessages = map[string]string{
	RuleLength:    "The password must be 6 to 15 characters long.",
	RuleNumber:    "The password must contain a number.",
	RuleLowercase: "The password must contain a lowercase letter.",
	RuleUppercase: "The password must contain an uppercase letter.",
	RuleSpecial:   "The password must contain a special character.",
}

// BrokenRules lists the rules pw breaks, in the order above; none means it passes. A special character is any
// character that is neither a letter, a digit nor white space.
func BrokenRules(pw string) []string {
	var num, lower, upper, special bool
	for _, r := range pw {
		switch {
		case unicode.IsDigit(r):
			num = true
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			upper = true
		case !unicode.IsLetter(r) && !unicode.IsSpace(r):
			special = true
		}
	}
	var broken []string
	if n := utf8.RuneCountInString(pw); n < PasswordMin || n > PasswordMax {
		broken = append(broken, RuleLength)
	}
	for _, c := range []struct {
		ok   bool
		rule string
	}{{num, RuleNumber}, {lower, RuleLowercase}, {upper, RuleUppercase}, {special, RuleSpecial}} {
		if !c.ok {
			broken = append(broken, c.rule)
		}
	}
	return broken
}
