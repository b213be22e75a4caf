package source

import (
	"fmt"
	"slices"
	"strings"
)

// Approval choices, in the order Hermes lists them. Every transport sends
// only these.
const (
	ChoiceOnce    = "once"
	ChoiceSession = "session"
	ChoiceAlways  = "always"
	ChoiceDeny    = "deny"
)

// Choices returns every approval choice Herald knows how to send, in
// Hermes' order (a fresh slice each call).
func Choices() []string { return []string{ChoiceOnce, ChoiceSession, ChoiceAlways, ChoiceDeny} }

// IsChoice reports whether c is one of Choices.
func IsChoice(c string) bool { return slices.Contains(Choices(), c) }

// CheckChoice returns a *ChoiceError unless choice is one of Choices.
func CheckChoice(choice string) error {
	if IsChoice(choice) {
		return nil
	}
	return &ChoiceError{Choice: choice, Allowed: Choices()}
}

// ChoiceError is returned for an approval choice Herald does not send.
type ChoiceError struct {
	// Choice is the rejected value.
	Choice string
	// Allowed lists the accepted ones.
	Allowed []string
}

// Error names the bad choice and the good ones.
func (e *ChoiceError) Error() string {
	return fmt.Sprintf("approval choice %q is not one of %s", e.Choice, strings.Join(e.Allowed, ", "))
}
