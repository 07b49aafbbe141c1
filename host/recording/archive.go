package recording

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/moatdev/moat/host/scripted"
)

// The archive's layout. Everything moat reads is under moat/; the recorded
// root is under root/, so that a testscript that extracts the archive finds
// the root where replay looks for it.
const (
	sessionFile = "moat/session.json"
	scriptFile  = "moat/model.json"
	callsDir    = "moat/calls/"
	filesFile   = "moat/files.json"
	rootDir     = "root/"
	namesDir    = "moat/names/" // the content of a file whose name txtar cannot hold
)

// Text encodings. txtar cannot hold every text as it is: a file's data
// always ends in a newline, and a line that looks like a file marker
// would start a new file. So a text is stored as it is when it can be, and
// otherwise marked with how it was changed.
const (
	encNoEOL  = "noeol"  // a newline was added at the end
	encQuoted = "quoted" // every line starts with '>' (txtar.Quote)
	encBase64 = "base64" // not UTF-8: base64, in lines
)

func putText(b []byte) ([]byte, string) {
	if !utf8.Valid(b) {
		enc := base64.StdEncoding.EncodeToString(b)
		var out []byte
		for len(enc) > 76 {
			out = append(append(out, enc[:76]...), '\n')
			enc = enc[76:]
		}
		return append(append(out, enc...), '\n'), encBase64
	}
	var encs []string
	if len(b) == 0 || b[len(b)-1] != '\n' {
		b = append(append([]byte(nil), b...), '\n')
		encs = append(encs, encNoEOL)
	}
	if txtar.NeedsQuote(b) {
		q, err := txtar.Quote(b)
		if err == nil {
			b = q
			encs = append(encs, encQuoted)
		}
	}
	return b, strings.Join(encs, ",")
}

func getText(b []byte, enc string) ([]byte, error) {
	if enc == encBase64 {
		return base64.StdEncoding.DecodeString(strings.ReplaceAll(string(b), "\n", ""))
	}
	encs := strings.Split(enc, ",")
	has := func(e string) bool {
		for _, x := range encs {
			if x == e {
				return true
			}
		}
		return false
	}
	if has(encQuoted) {
		u, err := txtar.Unquote(b)
		if err != nil {
			return nil, err
		}
		b = u
	}
	if has(encNoEOL) {
		if len(b) == 0 || b[len(b)-1] != '\n' {
			return nil, fmt.Errorf("text marked %s does not end in a newline", encNoEOL)
		}
		b = b[:len(b)-1]
	}
	return b, nil
}

// callHead is the first line of a call's file.
type callHead struct {
	Turn     int             `json:"turn"`
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args,omitempty"`
	RawArgs  *string         `json:"raw_args,omitempty"` // arguments that are not compact JSON
	Error    bool            `json:"error"`
	Encoding string          `json:"encoding,omitempty"`
}

type reviewHead struct {
	Outcome  string `json:"outcome"`
	Header   int    `json:"header_lines"`
	Reason   string `json:"reason,omitempty"`
	Encoding string `json:"encoding,omitempty"`
}

type sentHead struct {
	Encoding string `json:"encoding,omitempty"`
}

type fileEntry struct {
	Path string `json:"path,omitempty"`
	// PathBase64 is the path, base64, when it is not one txtar and JSON
	// hold as it is (a newline, bytes that are not UTF-8, spaces at its
	// ends); the content is then namesDir + its index.
	PathBase64  string `json:"path_base64,omitempty"`
	Dir         bool   `json:"dir,omitempty"`
	Mode        string `json:"mode"`
	ModTime     string `json:"mtime"`
	Placeholder bool   `json:"placeholder,omitempty"`
	Size        int64  `json:"size,omitempty"` // a placeholder's
	Link        string `json:"link,omitempty"`
	LinkBase64  string `json:"link_base64,omitempty"` // a target JSON cannot hold as it is
	Refused     string `json:"refused,omitempty"`     // a refused link's reason (File.Refused)
	Special     string `json:"special,omitempty"`     // pipe or socket (File.Special)
	Encoding    string `json:"encoding,omitempty"`
}

// withHead is a JSON line followed by a text.
func withHead(head any, text []byte) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<root>/notes.txt" as it is
	enc.Encode(head)
	return append(b.Bytes(), text...) // Encode ended the line
}

func splitHead(data []byte, head any) ([]byte, error) {
	line, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return nil, fmt.Errorf("no header line")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(head); err != nil {
		return nil, fmt.Errorf("header: %v", err)
	}
	return rest, nil
}

// callName names call i's file: its number and tool, so that the archive
// reads in order. The tool name is the model's; only safe characters stay.
func callName(i int, tool string) string {
	safe := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_' // never '.': ".sent" and ".review" name a call's other files
	}, tool)
	if len(safe) > 40 {
		safe = safe[:40]
	}
	return fmt.Sprintf("%s%03d-%s", callsDir, i+1, safe)
}

func compactArgs(args string) (json.RawMessage, *string) {
	var b bytes.Buffer
	if json.Compact(&b, []byte(args)) == nil && b.String() == args && args != "" {
		return json.RawMessage(args), nil
	}
	return nil, &args
}

// Encode writes the recording as a txtar archive.
func Encode(r *Recording) ([]byte, error) {
	a := &txtar.Archive{Comment: []byte(r.Comment)}
	add := func(name string, data []byte) { a.Files = append(a.Files, txtar.File{Name: name, Data: data}) }
	sess, err := json.MarshalIndent(r.Session, "", "  ")
	if err != nil {
		return nil, err
	}
	add(sessionFile, append(sess, '\n'))
	script, err := encodeScript(r.Script)
	if err != nil {
		return nil, err
	}
	add(scriptFile, script)
	for i, c := range r.Calls {
		name := callName(i, c.Tool)
		text, enc := putText([]byte(c.Text))
		h := callHead{Turn: c.Turn, Tool: c.Tool, Error: c.Error, Encoding: enc}
		h.Args, h.RawArgs = compactArgs(c.Args)
		add(name, withHead(h, text))
		if c.Sent != nil {
			text, enc := putText([]byte(*c.Sent))
			add(name+".sent", withHead(sentHead{Encoding: enc}, text))
		}
		if c.Review != nil {
			text, enc := putText([]byte(joinLines(c.Review.Lines)))
			add(name+".review", withHead(reviewHead{Outcome: c.Review.Outcome, Header: c.Review.Header, Reason: c.Review.Reason, Encoding: enc}, text))
		}
	}
	if len(r.Files) > 0 {
		var entries []fileEntry
		for _, f := range r.Files {
			e := fileEntry{Dir: f.Dir, Mode: fmt.Sprintf("%04o", f.Mode.Perm()), ModTime: f.ModTime.UTC().Format(time.RFC3339Nano), Placeholder: f.Placeholder, Link: f.Link, Refused: f.Refused, Special: f.Special}
			if f.Placeholder || f.Refused != "" {
				e.Size = f.Size
			}
			name := rootDir + f.Path
			if safeName(f.Path) {
				e.Path = f.Path
			} else {
				e.PathBase64 = base64.StdEncoding.EncodeToString([]byte(f.Path))
				name = fmt.Sprintf("%s%d", namesDir, len(entries))
			}
			if !utf8.ValidString(f.Link) {
				e.Link, e.LinkBase64 = "", base64.StdEncoding.EncodeToString([]byte(f.Link))
			}
			if !f.Dir && !f.Placeholder && f.Link == "" && f.Refused == "" && f.Special == "" {
				data, enc := putText(f.Data)
				e.Encoding = enc
				add(name, data)
			}
			entries = append(entries, e)
		}
		b, _ := json.MarshalIndent(entries, "", "  ")
		add(filesFile, append(b, '\n'))
	}
	return txtar.Format(a), nil
}

// encodeScript writes the fake server's script as the hand-written ones
// in moat's tests are: one turn a line. (Indenting would change the
// arguments the OpenAI API sends as text.)
func encodeScript(s scripted.Script) ([]byte, error) {
	models, err := json.Marshal(s.Models)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\"models\":%s,\"turns\":[", models)
	for i, t := range s.Turns {
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false) // <tool_call> as the model wrote it, readable
		if err := enc.Encode(t); err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  ")
		b.Write(bytes.TrimSuffix(line.Bytes(), []byte("\n")))
	}
	b.WriteString("\n]}\n")
	return b.Bytes(), nil
}

// safeName reports whether a path can be a txtar file's name and a JSON
// string as it is.
func safeName(p string) bool {
	return utf8.ValidString(p) && !strings.ContainsAny(p, "\n\r") && p == strings.TrimSpace(p)
}

// insideRoot reports whether p is a slash-separated path of names inside
// the root (fs.ValidPath without its UTF-8 rule: a name may hold any byte
// but '/' and NUL).
func insideRoot(p string) bool {
	if p == "" || p == "." || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return true
}

// linkInside reports whether a link at p with this target stays inside
// the root, lexically: a recording never makes a link out of it.
func linkInside(p, target string) bool {
	if path.IsAbs(target) || strings.Contains(target, `\`) {
		return false
	}
	j := path.Join(path.Dir(p), target)
	return j != ".." && !strings.HasPrefix(j, "../")
}

func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// Decode reads an archive Encode wrote (or one extracted and packed
// again: only the files' names and data matter).
func Decode(data []byte) (*Recording, error) {
	return decodeArchive(txtar.Parse(data))
}

func decodeArchive(a *txtar.Archive) (*Recording, error) {
	r := &Recording{Comment: string(a.Comment)}
	files := map[string][]byte{}
	for _, f := range a.Files {
		files[f.Name] = f.Data
	}
	sess, ok := files[sessionFile]
	if !ok {
		return nil, fmt.Errorf("not a moat recording: no %s", sessionFile)
	}
	dec := json.NewDecoder(bytes.NewReader(sess))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r.Session); err != nil {
		return nil, fmt.Errorf("%s: %v", sessionFile, err)
	}
	script, err := scripted.ParseScript(files[scriptFile])
	if err != nil {
		return nil, fmt.Errorf("%s: %v", scriptFile, err)
	}
	r.Script = script

	var names []string
	for n := range files {
		if strings.HasPrefix(n, callsDir) && !strings.HasSuffix(n, ".sent") && !strings.HasSuffix(n, ".review") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for i, n := range names {
		num, _, _ := strings.Cut(strings.TrimPrefix(n, callsDir), "-")
		if k, err := strconv.Atoi(num); err != nil || k != i+1 {
			return nil, fmt.Errorf("%s: calls must be numbered 001, 002, ... in order", n)
		}
		var h callHead
		rest, err := splitHead(files[n], &h)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", n, err)
		}
		text, err := getText(rest, h.Encoding)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", n, err)
		}
		c := Call{Turn: h.Turn, Tool: h.Tool, Error: h.Error, Text: string(text), Args: string(h.Args)}
		if h.RawArgs != nil {
			c.Args = *h.RawArgs
		}
		if d, ok := files[n+".sent"]; ok {
			var sh sentHead
			rest, err := splitHead(d, &sh)
			if err != nil {
				return nil, fmt.Errorf("%s.sent: %v", n, err)
			}
			t, err := getText(rest, sh.Encoding)
			if err != nil {
				return nil, fmt.Errorf("%s.sent: %v", n, err)
			}
			s := string(t)
			c.Sent = &s
		}
		if d, ok := files[n+".review"]; ok {
			var rh reviewHead
			rest, err := splitHead(d, &rh)
			if err != nil {
				return nil, fmt.Errorf("%s.review: %v", n, err)
			}
			t, err := getText(rest, rh.Encoding)
			if err != nil {
				return nil, fmt.Errorf("%s.review: %v", n, err)
			}
			c.Review = &Review{Lines: splitLines(string(t)), Header: rh.Header, Outcome: rh.Outcome, Reason: rh.Reason}
		}
		r.Calls = append(r.Calls, c)
	}

	if m, ok := files[filesFile]; ok {
		var entries []fileEntry
		if err := json.Unmarshal(m, &entries); err != nil {
			return nil, fmt.Errorf("%s: %v", filesFile, err)
		}
		for i, e := range entries {
			content := rootDir + e.Path
			if e.PathBase64 != "" {
				b, err := base64.StdEncoding.DecodeString(e.PathBase64)
				if err != nil || e.Path != "" {
					return nil, fmt.Errorf("%s: path_base64 %q", filesFile, e.PathBase64)
				}
				e.Path, content = string(b), fmt.Sprintf("%s%d", namesDir, i)
			}
			if e.LinkBase64 != "" {
				b, err := base64.StdEncoding.DecodeString(e.LinkBase64)
				if err != nil || e.Link != "" {
					return nil, fmt.Errorf("%s: link_base64 %q", filesFile, e.LinkBase64)
				}
				e.Link = string(b)
			}
			if !insideRoot(e.Path) {
				return nil, fmt.Errorf("%s: %q is not a path inside the root", filesFile, e.Path)
			}
			mode, err := strconv.ParseUint(e.Mode, 8, 32)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: mode %q", filesFile, e.Path, e.Mode)
			}
			mt, err := time.Parse(time.RFC3339Nano, e.ModTime)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: mtime %q", filesFile, e.Path, e.ModTime)
			}
			if e.Size < 0 || e.Size > 0 && !e.Placeholder && e.Refused == "" || e.Refused != "" && e.Size > 4096 {
				return nil, fmt.Errorf("%s: %s: size %d (only a placeholder or a refused link has one)", filesFile, e.Path, e.Size)
			}
			if e.Refused != "" && (e.Refused != RefusedOutside && e.Refused != RefusedDenied || e.Link != "" || e.Dir || e.Placeholder) {
				return nil, fmt.Errorf("%s: %s: refused %q", filesFile, e.Path, e.Refused)
			}
			f := File{Path: e.Path, Dir: e.Dir, Mode: fs.FileMode(mode).Perm(), ModTime: mt, Placeholder: e.Placeholder, Size: e.Size, Link: e.Link, Refused: e.Refused}
			if e.Link != "" && !linkInside(e.Path, e.Link) {
				return nil, fmt.Errorf("%s: the link %s points out of the root (%q)", filesFile, e.Path, e.Link)
			}
			if e.Special != "" && (e.Special != SpecialPipe && e.Special != SpecialSocket || e.Link != "" || e.Refused != "" || e.Dir || e.Placeholder) {
				return nil, fmt.Errorf("%s: %s: special %q", filesFile, e.Path, e.Special)
			}
			f.Special = e.Special
			if !e.Dir && !e.Placeholder && e.Link == "" && e.Refused == "" && e.Special == "" {
				d, ok := files[content]
				if !ok {
					return nil, fmt.Errorf("%s lists %q, and the archive has no %s", filesFile, e.Path, content)
				}
				if f.Data, err = getText(d, e.Encoding); err != nil {
					return nil, fmt.Errorf("%s%s: %v", rootDir, e.Path, err)
				}
			}
			r.Files = append(r.Files, f)
		}
	}
	return r, nil
}
