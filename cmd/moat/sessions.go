package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/moatdev/moat/host/agent"
	"github.com/moatdev/moat/host/assembly"
	"github.com/moatdev/moat/host/confine"
	// ask.go has a type session: the package is "stored" here.
	stored "github.com/moatdev/moat/host/session"
)

// sessionsHelp says where sessions are kept and how long, for moat help
// chat and moat help sessions alike.
var sessionsHelp = fmt.Sprintf(`Every chat is saved after each answer, in your state folder:
$XDG_STATE_HOME/moat/sessions, else ~/.local/state/moat/sessions (on macOS
~/Library/Application Support/moat/sessions, on Windows
%%LocalAppData%%\moat\sessions), never inside the root. The files are private
to you (0600 in a 0700 folder) and hold what the model read. Whenever a
chat is saved, sessions unused for %d days are deleted and so are the
oldest beyond %d; one session holds at most %d MiB (beyond that its oldest
questions are left out of the saved copy). --no-save keeps a chat off the
disk.`, int(stored.MaxAge.Hours()/24), stored.MaxCount, stored.MaxBytes>>20)

func sessionsCommand(e *env) *ffcli.Command {
	return &ffcli.Command{
		Name:       "sessions",
		ShortUsage: "moat sessions",
		ShortHelp:  "list the saved chat sessions",
		LongHelp: `Lists the saved chat sessions, the most recently used first: the ID, when
it was last used, how many questions it holds, its root and its first
question. 'moat chat --continue' goes on with the latest session of the
root; 'moat chat --resume ID' with any one, in its own root.

` + sessionsHelp,
		FlagSet: flag.NewFlagSet("moat sessions", flag.ContinueOnError),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("sessions takes no arguments")
			}
			st, err := sessionStore(e)
			if err != nil {
				return err
			}
			return listSessions(e.stdout, st)
		},
	}
}

func sessionStore(e *env) (*stored.Store, error) {
	dir, err := stored.Dir(e.getenv, runtime.GOOS)
	if err != nil {
		return nil, err
	}
	return stored.NewStore(dir, nil), nil
}

func listSessions(w io.Writer, st *stored.Store) error {
	list, err := st.List()
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintf(w, "No saved sessions in %s; moat chat saves one.\n", agent.Sanitize(st.Path(), false))
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWHEN\tQUESTIONS\tROOT\tFIRST QUESTION")
	for _, l := range list {
		when := l.Updated.Local().Format("2006-01-02 15:04")
		if l.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\t?\t?\t(unreadable: %s)\n", l.ID, when, agent.Sanitize(l.Err.Error(), false))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", l.ID, when, l.Turns, agent.Sanitize(l.Root, false), agent.Sanitize(l.First, false))
	}
	return tw.Flush()
}

// sessionFlags are chat's: which saved session to go on with, if any.
type sessionFlags struct {
	cont   bool
	resume string
	noSave bool
}

func (f *sessionFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.cont, "continue", false, "go on with the latest saved session of this root")
	fs.StringVar(&f.resume, "resume", "", "go on with the saved session of this `id`, or of the one ID that starts so (moat sessions lists them); it must be of this root")
	fs.BoolVar(&f.noSave, "no-save", false, "do not save this chat (it cannot be resumed)")
}

// recorder keeps one chat's session file up to date.
type recorder struct {
	store *stored.Store
	cur   *stored.Saved
	saved bool   // cur has been written at least once
	off   string // why nothing is saved, "" while saving
}

// start finds the session to go on with (--continue, --resume) and
// prepares the recorder (host/assembly decides which session resumes in
// these roots, and whether the chat is saved). prior is nil for a new
// conversation.
func (f *sessionFlags) start(e *env, roots []confine.Dir) (rec *recorder, prior *stored.Saved, err error) {
	sv, err := assembly.OpenSaved(e.getenv, runtime.GOOS, roots, assembly.Resume{Continue: f.cont, ID: f.resume, NoSave: f.noSave})
	if err != nil {
		return nil, nil, err
	}
	return &recorder{store: sv.Store, cur: sv.Cur, saved: sv.Prior != nil, off: sv.Off}, sv.Prior, nil
}

// save writes the conversation after a turn; the first failure is said
// once and saving stops.
func (r *recorder) save(stderr io.Writer, s *agent.Session, model string) {
	if r.off != "" || r.cur == nil {
		return
	}
	msgs := s.Conversation()
	if len(msgs) == 0 {
		return
	}
	r.cur.Model = model
	dropped, err := r.store.Save(r.cur, msgs)
	if err != nil {
		r.off = err.Error()
		fmt.Fprintf(stderr, "moat: this chat is no longer saved: %s\n", agent.Sanitize(err.Error(), false))
		return
	}
	if dropped > 0 && !r.saved {
		fmt.Fprintf(stderr, "moat: session %s is over %d MiB; its oldest questions are left out of the saved copy\n", r.cur.ID, stored.MaxBytes>>20)
	}
	r.saved = true
}

// restart begins a new session (after /clear); the old one stays saved.
func (r *recorder) restart() {
	if r.cur != nil && r.store != nil {
		r.cur, r.saved = r.store.New(r.cur.Root, r.cur.Model), false
	}
}

// noteStart says, when a chat starts, what became of the session flags:
// the session resumed, or why this chat is not saved.
func (r *recorder) noteStart(stderr io.Writer, prior *stored.Saved) {
	if prior != nil {
		fmt.Fprintf(stderr, "moat: resuming session %s (%d question%s, last used %s)\n",
			prior.ID, prior.Turns, plural(prior.Turns), prior.Updated.Local().Format("2006-01-02 15:04"))
	}
	if r.off != "" && r.off != "--no-save" {
		fmt.Fprintf(stderr, "moat: this chat is not saved: %s\n", agent.Sanitize(r.off, false))
	}
}

// noteEnd tells a person at the terminal how to go on with the stored.
func (r *recorder) noteEnd(stderr io.Writer) {
	if r.off == "" && r.saved {
		fmt.Fprintf(stderr, "moat: session %s saved; go on with it: moat chat --resume %s (or --continue in this root)\n", r.cur.ID, r.cur.ID)
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
