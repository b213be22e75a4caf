package source

import "strings"

// Words are what surfaces call a transport's things, for people. A
// surface words a gateway from its driver's Words, never by its kind.
type Words struct {
	// Conversation is what one conversation with the agent is called:
	// "session" on a dashboard gateway, "run" on an API server.
	Conversation string `json:"conversation"`
	// Interrupted is what a request says whose conversation was stopped
	// under it ("Turn interrupted", "Run stopped").
	Interrupted string `json:"interrupted"`
	// Badge, when set, is shown by a gateway's name to tell its kind
	// apart ("API server").
	Badge string `json:"badge,omitempty"`
	// FollowHint is what the field that follows a conversation by its id
	// (Offers.FollowByID) shows while empty ("run_… started elsewhere").
	FollowHint string `json:"follow_hint,omitempty"`
	// IDHint says where such an id comes from ("POST /v1/runs returns
	// it as run_…").
	IDHint string `json:"id_hint,omitempty"`
}

// MidSentence is a driver's name or label with its first letter lowered
// for use mid-sentence, unless it starts an acronym ("Session token",
// but "API key").
func MidSentence(s string) string {
	if len(s) > 1 && s[1] >= 'a' && s[1] <= 'z' {
		return strings.ToLower(s[:1]) + s[1:]
	}
	return s
}

// SecretWord is the mode's secret as said mid-sentence ("token", "API
// key"; "" when it needs none).
func (m AuthMode) SecretWord() string { return MidSentence(m.Secret) }

// GenericWords are the words of a transport that declares none, and of a
// gateway whose transport is not known.
var GenericWords = Words{Conversation: "session", Interrupted: "Turn interrupted"}

// orGeneric fills the words w lacks from GenericWords.
func (w Words) orGeneric() Words {
	if w.Conversation == "" {
		w.Conversation = GenericWords.Conversation
	}
	if w.Interrupted == "" {
		w.Interrupted = GenericWords.Interrupted
	}
	return w
}

// Offers are what surfaces may offer on a transport's sources. Each is a
// promise about the optional capabilities (capabilities.go) its sources
// implement, declared on the driver so that a surface knows it before a
// source is open (the window's form, the command line's flags).
type Offers struct {
	// ListsSessions: the server lists live sessions that Herald follows
	// or offers (SessionFollower): the Sessions panel, a follow policy,
	// resuming sessions by id.
	ListsSessions bool `json:"lists_sessions"`
	// AskNew: a prompt can start a new conversation (Asker).
	AskNew bool `json:"ask_new"`
	// AskFollowed: a prompt can also go to a conversation Herald follows
	// (Asker); else every prompt starts a new one.
	AskFollowed bool `json:"ask_followed"`
	// FollowByID: a conversation started elsewhere is followed by the id
	// the user gives, as nothing lists it (the window's "Follow run ID").
	FollowByID bool `json:"follow_by_id"`
	// StartsRuns: Herald can start a run and follow it (RunStarter).
	StartsRuns bool `json:"starts_runs"`
	// ContinuesSessions: the server lists its stored sessions and a
	// prompt can continue one (SessionStore and Asker): the gateway's
	// card lists them, the quick prompt offers them.
	ContinuesSessions bool `json:"continues_sessions"`
}

// WordsOf is what surfaces call the things of a transport by kind or
// alias; an unknown kind has GenericWords.
func WordsOf(kind string) Words {
	d, err := Lookup(kind)
	if err != nil {
		return GenericWords
	}
	return d.Words
}

// OffersOf is what surfaces may offer on a transport by kind or alias; an
// unknown kind offers nothing.
func OffersOf(kind string) Offers {
	d, err := Lookup(kind)
	if err != nil {
		return Offers{}
	}
	return d.Offers
}
