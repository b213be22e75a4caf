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

// ChoiceInfo is one approval choice as every surface shows it: the one
// table of labels, keys and descriptions (ChoiceTable). A surface that
// words a choice takes it from here; acceptance.TestChoiceLabelsOnlyInTable
// fails when one writes its own.
type ChoiceInfo struct {
	// Choice is what transports send ("once").
	Choice string `json:"choice"`
	// Key is the keyboard shortcut (the window's sheet, `herald watch`).
	Key string `json:"key"`
	// Label is the button or menu text ("Allow once").
	Label string `json:"label"`
	// Description says what the choice does, in one sentence.
	Description string `json:"description"`
	// Confirm: the choice asks the user to confirm first.
	Confirm bool `json:"confirm,omitempty"`
	// Done says it was done, for a confirmation ("Allowed once").
	Done string `json:"done,omitempty"`
}

// choiceTable is every choice, in Hermes' order.
var choiceTable = []ChoiceInfo{
	{Choice: ChoiceOnce, Key: "o", Label: "Allow once", Done: "Allowed once", Description: "Run this command this time; Hermes asks again next time."},
	{Choice: ChoiceSession, Key: "s", Label: "Allow for session", Done: "Allowed for the session", Description: "Run it, and commands like it for the rest of this session, without asking."},
	{Choice: ChoiceAlways, Key: "a", Label: "Always allow", Done: "Always allowed", Description: "Run it, and never ask again for this command pattern on this Hermes.", Confirm: true},
	{Choice: ChoiceDeny, Key: "d", Label: "Deny", Done: "Denied", Description: "Do not run it; the agent is told it was refused."},
}

// ChoiceTable returns every choice with its label, key and description, in
// Hermes' order (a fresh slice each call).
func ChoiceTable() []ChoiceInfo { return slices.Clone(choiceTable) }

// ChoiceOf returns the table's entry for choice c.
func ChoiceOf(c string) (ChoiceInfo, bool) {
	i := slices.IndexFunc(choiceTable, func(x ChoiceInfo) bool { return x.Choice == c })
	if i < 0 {
		return ChoiceInfo{}, false
	}
	return choiceTable[i], true
}

// ChoiceLabel is choice c's label; a choice not in the table is said as
// it is.
func ChoiceLabel(c string) string {
	if x, ok := ChoiceOf(c); ok {
		return x.Label
	}
	return c
}

// ChoiceForKey is the choice keyboard shortcut k selects ("" for none).
func ChoiceForKey(k string) string {
	for _, x := range choiceTable {
		if strings.EqualFold(x.Key, k) {
			return x.Choice
		}
	}
	return ""
}

// ChoiceKeysHelp says the shortcuts of the choices in words: "o Allow
// once, s Allow for session, a Always allow (asks to confirm), d Deny".
func ChoiceKeysHelp() string {
	parts := make([]string, len(choiceTable))
	for i, x := range choiceTable {
		parts[i] = x.Key + " " + x.Label
		if x.Confirm {
			parts[i] += " (asks to confirm)"
		}
	}
	return strings.Join(parts, ", ")
}

// Choices returns every approval choice Herald knows how to send, in
// Hermes' order (a fresh slice each call).
func Choices() []string {
	out := make([]string, len(choiceTable))
	for i, x := range choiceTable {
		out[i] = x.Choice
	}
	return out
}

// IsChoice reports whether c is one of Choices.
func IsChoice(c string) bool { _, ok := ChoiceOf(c); return ok }

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
