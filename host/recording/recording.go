// Package recording turns a moat ask or chat session into a txtar archive
// and replays it as a regression test.
//
// A [Recorder] sits at the seams the agent loop already has: it wraps the
// model [agent.Backend] (the replies, which become the fake model server's
// script), the engine (every tool call and the exact text it returned),
// the approval gate's [gate.Reviewer] (each review a person saw and their
// decision) and the transcript (the questions, and what the model was sent
// after the context budget cut it). With --record-files it also takes
// every file a call opened, folder it listed and path it described, as the
// guest's mount observed them (confine.Observer), each read again through
// the confined view, so a file the deny-list hides never reaches it.
// Absolute paths inside the root are written "<root>/...".
//
// [Replay] plays the model's side from the recording through the scripted
// model server (host/scripted) and the real agent loop, runs every tool call
// again through the engine it is given (the whole sandbox), answers every
// review from the recorded decision, and compares each result, each review
// and each question's outcome byte for byte, but for the lines the tool
// registry declares volatile (proto.Volatile), which a replay against a
// folder compares for being there.
package recording

import (
	"io/fs"
	"time"

	"github.com/moatdev/moat/host/limits"
	"github.com/moatdev/moat/host/scripted"
)

// Recording is one recorded session.
type Recording struct {
	Comment string // how it was made, for people; ignored on replay
	Session SessionInfo
	Script  scripted.Script // the model's replies, turn by turn
	Calls   []Call
	Files   []File // --record-files: the files opened, the folders listed, the paths described
}

// SessionInfo is what replay needs besides the replies and the calls: the
// settings that change behaviour, the questions and how each ended.
type SessionInfo struct {
	Command  string `json:"command"`   // ask or chat
	API      string `json:"api"`       // ollama or openai
	Model    string `json:"model"`     // as the server was asked for it
	RootName string `json:"root_name"` // the root folder's base name (the gate shows it)
	// Roots are the labels of several roots (moat --root a --root b), in
	// order; empty for one root. A replay restores each as the folder
	// LABEL of one folder, and names them so.
	Roots    []string `json:"roots,omitempty"`
	NumCtx   int      `json:"num_ctx"`
	MaxTurns int      `json:"max_turns"`
	// The sandbox's limits and lists, as the engine was given them: their
	// JSON members sit here, between max_turns and writes. no_redact
	// among them: recorded with --redact=false, so replay shows the files
	// as they are too; without it (every recording before the field) the
	// replay redacts, as the session did.
	limits.Options
	Writes string `json:"writes"`          // ask or deny
	Think  string `json:"think,omitempty"` // --think, passed through
	// System is the system prompt when --system replaced the built-in one.
	System    string     `json:"system,omitempty"`
	Files     bool       `json:"files,omitempty"` // recorded with --record-files
	Questions []Question `json:"questions"`
	Turns     []Turn     `json:"turns"`
}

// Question is one question put to the model and how it ended.
type Question struct {
	// Clear: the conversation was cleared (chat's /clear) before it.
	Clear bool   `json:"clear,omitempty"`
	Text  string `json:"text"`
	// Continues is how many times the person gave the model more turns
	// on it at the turn cap (agent.Session.Continue).
	Continues int `json:"continues,omitempty"`
	// Outcome is answer, turn_cap, context_full or failed; Answer the
	// answer's text, Error the message a person was shown otherwise.
	Outcome string `json:"outcome"`
	Answer  string `json:"answer,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Why a link is refused (File.Refused).
const (
	RefusedOutside = "outside"
	RefusedDenied  = "denied"
)

// The special files a recording makes again (File.Special).
const (
	SpecialPipe   = "pipe"
	SpecialSocket = "socket"
)

// Outcomes of a question.
const (
	Answered    = "answer"
	TurnCap     = "turn_cap"
	ContextFull = "context_full"
	Failed      = "failed"
)

// Turn is one request to the model, as the context budget shaped it.
type Turn struct {
	Question int `json:"question"` // 1-based
	// Messages is how many messages were sent; Dropped lists (0-based)
	// those the budget replaced by a placeholder to fit the window.
	Messages int   `json:"messages"`
	Dropped  []int `json:"dropped,omitempty"`
}

// Call is one tool call and what came back.
type Call struct {
	Turn  int    // the model reply (1-based) that asked for it
	Tool  string // as the model named it
	Args  string // as the model sent them
	Error bool   // the result was an error
	Text  string // the result, exactly as the engine returned it
	// Sent is what the model was sent when it is not Text: the result cut
	// to fit the context window.
	Sent *string
	// Review is the change a person was shown for a write proposal, and
	// their decision; nil when no one was asked (refused before, or not a
	// write).
	Review *Review
}

// Review is one review and its decision.
type Review struct {
	Lines   []string // header and diff, as shown, without colour
	Header  int      // how many of Lines are the header (the rest: the diff)
	Outcome string   // approved, declined, unanswered, too_large, unavailable, failed, cancelled
	Reason  string   `json:",omitempty"`
}

// File is one entry of the recorded root.
type File struct {
	Path    string      // slash-separated, relative to the root
	Dir     bool        // a folder (listed, maybe empty)
	Data    []byte      // a file's content; nil for a placeholder
	ModTime time.Time   // restored on replay (stat shows it)
	Mode    fs.FileMode // permission bits
	// Placeholder: the name was listed or described but the content is
	// not recorded (no call opened it); replay creates it empty, or of
	// Size zero bytes when a call described it (stat shows the size).
	Placeholder bool
	Size        int64
	// Link is a symbolic link's target, for a link a listing showed whose
	// target the confined view resolves inside the root (or not at all);
	// replay makes the link again.
	Link string
	// Refused is a link the confined view refuses to follow, which the
	// tools show without its target: RefusedOutside (it leads out of the
	// root) or RefusedDenied (to a name the deny-list hides). Its target
	// is not recorded, only its length (Size, stat shows it); replay
	// makes a link of that length that the view refuses the same way.
	Refused string
	// Special is a named pipe (SpecialPipe) or a socket (SpecialSocket)
	// a listing showed: made again, never opened.
	Special string
}
