// Package redact finds secrets in text (private key blocks, cloud
// provider keys, tokens with fixed prefixes, and in configuration files a
// secret-named key's value) and replaces each with "[redacted: RULE-ID]".
// It is the deny-list's second line: a name rule cannot know that
// notes.txt holds an AWS key, the content can. host/confine uses it to
// serve every file as its redacted view (FindFile, FindReaderAt, View).
//
// The rules are data: gitleaks' default configuration, taken at a pinned
// release by go generate (internal/rulesgen writes rules_gen.go, with
// gitleaks' MIT licence), and moat's own (config_rules.go), some of which
// run only on a file of a shape (ShapeOf: configuration, netrc). They are
// applied as gitleaks applies them: a rule's regex runs only when one of
// its keywords occurs in the text (one pass finds them all, compared
// lower-cased, the prefilter gitleaks runs with Aho-Corasick;
// keywords.go), near that occurrence; the secret is the rule's secret
// group, and a finding below the rule's entropy or on an allowlist
// (gitleaks' global one and the rule's own: regexes and stopwords) is not
// a secret. A rule's regexes are compiled the first time its keyword is
// seen.
//
// What it does not do: recognise a secret of no known shape outside a
// configuration file (a password in source code), or one further than
// MaxFinding from its keyword; gitleaks' rules that apply only to some
// file names, and its generic-api-key heuristic, are left out
// (rules_gen.go lists them).
package redact

//go:generate go run ./internal/rulesgen -version v8.30.1 -o rules_gen.go

import (
	"errors"
	"io"
	"math"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// ruleData is one gitleaks rule as rules_gen.go holds it.
type ruleData struct {
	id, regex   string
	keywords    []string // lower case
	secretGroup int
	entropy     float64
	allow       []allowData
}

// allowData is one gitleaks allowlist. Path and commit conditions cannot
// hold for text without a file name: an "AND" allowlist that has them
// never allows, an "OR" one allows by its regexes and stopwords alone.
type allowData struct {
	and            bool
	pathsOrCommits bool
	target         string // "" (the secret), "match" or "line"
	regexes        []string
	stopwords      []string // lower case
}

// A Redactor holds the compiled rules. It is safe for concurrent use; the
// zero value is not usable, build one with [New].
type Redactor struct {
	rules  []*rule
	always []int // rules without keywords, run on every text
	// words finds every keyword. It is built on the first Find: a call
	// whose output shows no file's text needs none.
	words   func() *keywordFinder
	byWord  [][]int // keyword (pattern number) -> rules
	global  *allow
	globalD allowData
	gonce   sync.Once
}

type rule struct {
	ruleData
	// shape is the shapes of file the rule runs on (config_rules.go);
	// 0: every text.
	shape Shape
	once  sync.Once
	re    *regexp.Regexp
	allow []*allow
	// atWord: every match begins, at a word boundary, with one of the
	// rule's keywords (fixed-prefix tokens: `\b(ghp_...`), so a keyword
	// right after a word character ("os." for "s.") starts none.
	atWord bool
	// span bounds a match's length in bytes (maxLen), at most multiLine:
	// a match holding a keyword lies within span of it.
	span int
}

type allow struct {
	allowData
	res []*regexp.Regexp
}

// New builds a Redactor over gitleaks' rules and moat's own
// (config_rules.go).
func New() *Redactor {
	return newRedactor(append(gitleaksRules(), configRules()...), globalAllow())
}

func newRedactor(rules []ruleData, global allowData) *Redactor {
	r := &Redactor{globalD: global}
	words := map[string]int{}
	var list []string
	for i, d := range rules {
		ru := &rule{ruleData: d}
		switch {
		case strings.HasPrefix(d.id, "moat-config-"):
			ru.shape = Config
		case strings.HasPrefix(d.id, "moat-netrc-"):
			ru.shape = Netrc
		}
		r.rules = append(r.rules, ru)
		if len(d.keywords) == 0 {
			r.always = append(r.always, i)
		}
		for _, k := range d.keywords {
			n, ok := words[k]
			if !ok {
				n = len(list)
				words[k] = n
				list = append(list, k)
				r.byWord = append(r.byWord, nil)
			}
			r.byWord[n] = append(r.byWord[n], i)
		}
	}
	r.words = sync.OnceValue(func() *keywordFinder { return newKeywordFinder(list) })
	return r
}

func compileAllow(d allowData) *allow {
	a := &allow{allowData: d}
	for _, s := range d.regexes {
		if re, err := regexp.Compile(s); err == nil {
			a.res = append(a.res, re)
		}
	}
	return a
}

func (ru *rule) compile() {
	ru.once.Do(func() {
		ru.re, _ = regexp.Compile(ru.regex) // rulesgen compiled every one
		ru.atWord = startsAtKeyword(ru.regex, ru.keywords)
		ru.span = multiLine
		if re, err := syntax.Parse(ru.regex, syntax.Perl); err == nil {
			if n, ok := maxLen(re.Simplify()); ok && n < multiLine {
				ru.span = n
			}
		}
		for _, a := range ru.ruleData.allow {
			ru.allow = append(ru.allow, compileAllow(a))
		}
	})
}

// A Finding is one secret: its rule and where it is in the text.
type Finding struct {
	Rule       string
	Start, End int // the secret's bytes, text[Start:End]
}

// Find returns the secrets in text, in order, without overlaps (of two
// that overlap, the one that starts first, then the longer, is kept), by
// the rules that run on every text: not the configuration rules, which
// need a file's shape (FindFile).
func (r *Redactor) Find(text string) []Finding { return r.find(text, 0, false) }

// FindLines is Find with every line of text on its own: no finding spans
// two lines, so in an answer made of lines from many files (grep's) no
// rule matches across two of them.
func (r *Redactor) FindLines(text string) []Finding { return r.find(text, 0, true) }

// FindFile returns the secrets of one file's whole content, as Find, and
// by the rules for its shape too (ShapeOf: its name, and the start of
// text when the name does not decide). text is not kept.
func (r *Redactor) FindFile(name string, text []byte) []Finding {
	return r.find(unsafe.String(unsafe.SliceData(text), len(text)), ShapeOf(name, text), false)
}

func (r *Redactor) find(text string, shape Shape, lines bool) []Finding {
	return dedupe(r.findAll(text, shape, lines))
}

// findAll is every rule's findings in text, overlapping or not, in no
// order.
func (r *Redactor) findAll(text string, shape Shape, lines bool) []Finding {
	if len(text) == 0 {
		return nil
	}
	hits := r.candidates(text, shape)
	if hits == nil {
		return nil
	}
	var out []Finding
	for i, at := range hits {
		if at != nil {
			out = r.rules[i].find(r, text, at, lines, out)
		}
	}
	return out
}

// Streaming: a Scanner reads a file in pieces of findChunk bytes, each
// with findOverlap bytes of the file on either side. A match lies within
// MaxFinding bytes of its keyword (before: findBack, after: multiLine; see
// rule.find), less than findOverlap, so a finding that starts in a piece
// is found whole in what was read around it, and is kept by that piece
// alone.
const (
	findChunk   = 1 << 20
	findOverlap = 128 << 10
	// MaxFinding bounds a secret's length: the longest match any rule can
	// make (findBack before its keyword, multiLine from it).
	MaxFinding = findBack + multiLine
)

// FindReaderAt is FindFile over a file of size bytes read through ra,
// in bounded memory (a Scanner's): a file of any size is read once. The
// shape is decided by name and the file's first piece. A file that comes
// up short of size ends where it did.
func (r *Redactor) FindReaderAt(name string, ra io.ReaderAt, size int64) ([]Finding, error) {
	sc := r.NewScanner(name, ra, size)
	var out []Finding
	for {
		found, _, err := sc.Next()
		out = append(out, found...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// A Scanner finds the secrets of one file a piece at a time, in order,
// in bounded memory: findChunk + 2*findOverlap bytes of the file at a
// time, whatever its size. A reader of a large file needs only as much of
// it decided as it has read.
type Scanner struct {
	r     *Redactor
	name  string
	ra    io.ReaderAt
	size  int64
	buf   []byte
	next  int64 // the next piece's start
	end   int64 // the last finding's end
	shape Shape
	done  bool
	count int // findings returned
}

// MaxScanFindings bounds the findings a Scanner returns for one file, and
// so the memory a view of a file made of secrets takes: from the last
// one's start on, the rest of the file is one finding of TooMany.
const MaxScanFindings = 1 << 16

// TooMany is the rule of the finding that hides the rest of a file past
// MaxScanFindings.
const TooMany = "moat-too-many-secrets"

// NewScanner scans the file of size bytes that ra reads, named name.
func (r *Redactor) NewScanner(name string, ra io.ReaderAt, size int64) *Scanner {
	return &Scanner{r: r, name: name, ra: ra, size: size}
}

// ScanState is how far a Scanner got in a file: where its next piece
// starts, where its last finding ends, and the file's shape.
type ScanState struct {
	next, end int64
	shape     Shape
	count     int
}

// State is how far sc got.
func (sc *Scanner) State() ScanState { return ScanState{sc.next, sc.end, sc.shape, sc.count} }

// ResumeScanner scans on from where a Scanner of the same file (unchanged
// since) got: its findings before st are the ones it returned.
func (r *Redactor) ResumeScanner(name string, ra io.ReaderAt, size int64, st ScanState) *Scanner {
	return &Scanner{r: r, name: name, ra: ra, size: size, next: st.next, end: st.end, shape: st.shape, count: st.count}
}

// Next finds in the next piece: the findings that start in it (in order,
// none overlapping another), and the offset before which the file is
// decided, no later finding starting before it. At the end of the file
// it returns io.EOF (with the last piece's findings).
func (sc *Scanner) Next() ([]Finding, int64, error) {
	if sc.done || sc.next >= sc.size {
		sc.done = true
		sc.buf = nil
		return nil, max(sc.next, sc.end), io.EOF
	}
	s := sc.next
	lo, hi := max(0, s-findOverlap), min(sc.size, s+findChunk+findOverlap)
	if sc.buf == nil {
		sc.buf = make([]byte, min(sc.size, findChunk+2*findOverlap))
	}
	n, err := sc.ra.ReadAt(sc.buf[:hi-lo], lo)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	text := sc.buf[:n]
	if s == 0 {
		sc.shape = ShapeOf(sc.name, text)
	}
	// The findings that start in this piece, kept as the whole file's
	// are (in order of start, each that begins after the last kept one
	// ends): a finding in the overlap, which is not this piece's, hides
	// none of this piece's.
	var mine []Finding
	for _, f := range sc.r.findAll(unsafe.String(unsafe.SliceData(text), len(text)), sc.shape, false) {
		if start := lo + int64(f.Start); start >= s && start < s+findChunk {
			mine = append(mine, Finding{Rule: f.Rule, Start: int(start), End: int(lo) + f.End})
		}
	}
	sortFindings(mine)
	var out []Finding
	for _, f := range mine {
		if int64(f.Start) < sc.end {
			continue
		}
		if sc.count++; sc.count == MaxScanFindings {
			out = append(out, Finding{Rule: TooMany, Start: f.Start, End: int(sc.size)})
			sc.end, sc.done, sc.buf = sc.size, true, nil
			return out, sc.size, io.EOF
		}
		out = append(out, f)
		sc.end = int64(f.End)
	}
	sc.next = s + findChunk
	if int64(n) < hi-lo || sc.next >= sc.size { // the file ended, early or not
		sc.done, sc.buf = true, nil
		return out, max(lo+int64(n), sc.end), io.EOF
	}
	return out, max(sc.next, sc.end), nil
}

// sortFindings orders findings by start, the longer first.
func sortFindings(out []Finding) {
	sort.Slice(out, func(i, j int) bool {
		if out[i].Start != out[j].Start {
			return out[i].Start < out[j].Start
		}
		return out[i].End > out[j].End
	})
}

// dedupe sorts findings and drops those that overlap an earlier one.
func dedupe(out []Finding) []Finding {
	if len(out) == 0 {
		return nil
	}
	sortFindings(out)
	kept := out[:1]
	for _, f := range out[1:] {
		if f.Start >= kept[len(kept)-1].End {
			kept = append(kept, f)
		}
	}
	return kept
}

// candidates is the keyword prefilter: for each rule that runs on shape,
// where its keywords occur in text (compared lower-cased, as gitleaks
// does), nil for a rule none of whose keywords occurs; nil when no rule
// has any.
func (r *Redactor) candidates(text string, shape Shape) [][]int {
	var hits [][]int
	for _, i := range r.always {
		if hits == nil {
			hits = make([][]int, len(r.rules))
		}
		hits[i] = []int{0}
	}
	r.words().each(text, func(start, pattern int) {
		for _, i := range r.byWord[pattern] {
			if s := r.rules[i].shape; s != 0 && s&shape == 0 {
				continue
			}
			if hits == nil {
				hits = make([][]int, len(r.rules))
			}
			if h := hits[i]; len(h) == 0 || h[len(h)-1] != start {
				hits[i] = append(h, start)
			}
		}
	})
	return hits
}

// Where a rule's regex runs. A match holds its keyword and starts on the
// keyword's line (gitleaks' rules allow at most a few word characters
// before it), and may run on over a newline or two between a key and its
// value ("key:\n  value" in YAML): each keyword is looked for in its line
// and the two after it, windows of nearby keywords joined up to
// windowJoin bytes, so a regex runs over a few lines rather than the
// whole text. A rule written to span lines ("[\s\S]", "(?s)": key
// blocks) gets multiLine bytes from the keyword's line on. On a long
// line (minified JSON, a log), a window starts at most findBack bytes
// before its keyword and ends at most multiLine bytes after it: a key
// block deep in a one-line JSON file is found, and a finding is never
// longer than MaxFinding.
const (
	windowLines = 2
	windowJoin  = 4 << 10
	multiLine   = 64 << 10
	findBack    = 1 << 10
)

// find appends the rule's findings in text, given where its keywords are;
// with lines, each window is its keyword's line alone.
func (ru *rule) find(r *Redactor, text string, at []int, lines bool, out []Finding) []Finding {
	ru.compile()
	if ru.re == nil {
		return out
	}
	if len(ru.keywords) == 0 { // no prefilter: gitleaks runs such a rule on all of the text
		return ru.scan(r, text, 0, len(text), out)
	}
	multi := strings.Contains(ru.regex, `\s\S`) || strings.Contains(ru.regex, "(?s")
	ws, we := -1, -1
	for _, p := range at {
		if ru.atWord && p > 0 && isWordByte(text[p-1]) {
			continue
		}
		back := max(0, p-min(findBack, ru.span))
		ls := back + strings.LastIndexByte(text[back:p], '\n') + 1
		var le int
		if lines {
			if le = strings.IndexByte(text[p:], '\n'); le < 0 {
				le = len(text)
			} else {
				le += p
			}
			le = min(le, p+ru.span)
		} else if multi {
			le = min(len(text), max(ls, p)+multiLine)
		} else {
			le = p
			for k := 0; k <= windowLines && le < len(text); k++ {
				if e := strings.IndexByte(text[le:], '\n'); e >= 0 {
					le += e + 1
				} else {
					le = len(text)
				}
			}
			le = min(le, p+ru.span)
		}
		if lines && ls == ws {
			continue // this line's window is made
		}
		if ls < we && we-ws < windowJoin && !lines {
			we = max(we, le)
			continue
		}
		if we > 0 {
			out = ru.scan(r, text, ws, we, out)
		}
		ws, we = ls, le
	}
	if we > 0 {
		out = ru.scan(r, text, ws, we, out)
	}
	return out
}

// scan appends the rule's findings in text[ws:we].
func (ru *rule) scan(r *Redactor, text string, ws, we int, out []Finding) []Finding {
	win := text[ws:we]
	for _, m := range ru.re.FindAllStringSubmatchIndex(win, -1) {
		start, end := m[0], m[1]
		if ru.secretGroup > 0 && 2*ru.secretGroup+1 < len(m) && m[2*ru.secretGroup] >= 0 {
			start, end = m[2*ru.secretGroup], m[2*ru.secretGroup+1]
		} else if ru.secretGroup == 0 {
			for g := 1; 2*g+1 < len(m); g++ { // gitleaks: the first non-empty group
				if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
					start, end = m[2*g], m[2*g+1]
					break
				}
			}
		}
		secret := win[start:end]
		if secret == "" || ru.entropy != 0 && entropy(secret) <= ru.entropy {
			continue
		}
		match, line := win[m[0]:m[1]], lineOf(text, ws+m[0], ws+m[1])
		if r.allowed(ru, secret, match, line) {
			continue
		}
		out = append(out, Finding{Rule: ru.id, Start: ws + start, End: ws + end})
	}
	return out
}

func (r *Redactor) allowed(ru *rule, secret, match, line string) bool {
	r.gonce.Do(func() { r.global = compileAllow(r.globalD) })
	if r.global.allows(secret, match, line) {
		return true
	}
	for _, a := range ru.allow {
		if a.allows(secret, match, line) {
			return true
		}
	}
	return false
}

// allows is gitleaks' checkFindingAllowed for one allowlist, without
// file names or commits.
func (a *allow) allows(secret, match, line string) bool {
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	re := false
	for _, x := range a.res {
		if x.MatchString(target) {
			re = true
			break
		}
	}
	stop := false
	if len(a.stopwords) > 0 {
		low := strings.ToLower(secret)
		for _, w := range a.stopwords {
			if strings.Contains(low, w) {
				stop = true
				break
			}
		}
	}
	if !a.and {
		return re || stop
	}
	if a.pathsOrCommits || len(a.res) == 0 && len(a.stopwords) == 0 {
		return false
	}
	return (len(a.res) == 0 || re) && (len(a.stopwords) == 0 || stop)
}

// lineOf is the line(s) holding text[start:end].
func lineOf(text string, start, end int) string {
	s := strings.LastIndexByte(text[:start], '\n') + 1
	e := strings.IndexByte(text[end:], '\n')
	if e < 0 {
		return text[s:]
	}
	return text[s : end+e]
}

// entropy is the Shannon entropy of s in bits per character, as gitleaks
// computes it.
func entropy(s string) float64 {
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	inv := 1 / float64(len(s))
	var h float64
	for _, n := range counts {
		f := float64(n) * inv
		h -= f * math.Log2(f)
	}
	return h
}

// Redact returns text with every secret Find reports replaced by
// "[redacted: RULE-ID]", and how many were.
func (r *Redactor) Redact(text string) (string, int) { return redactWith(text, r.Find(text)) }

// RedactLines is Redact with FindLines: every line on its own.
func (r *Redactor) RedactLines(text string) (string, int) {
	return redactWith(text, r.FindLines(text))
}

func redactWith(text string, fs []Finding) (string, int) {
	if len(fs) == 0 {
		return text, 0
	}
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, f := range fs {
		b.WriteString(text[at:f.Start])
		b.WriteString(Mark(f.Rule))
		at = f.End
	}
	b.WriteString(text[at:])
	return b.String(), len(fs)
}

// Mark is what stands in for a secret found by rule.
func Mark(rule string) string { return "[redacted: " + rule + "]" }

// startsAtKeyword reports whether every match of expr begins with a word
// boundary and then one of keywords (lower case, each starting with a word
// character): expr is `\b` followed by literals, or alternatives of
// them, each of which begins with a keyword.
func startsAtKeyword(expr string, keywords []string) bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return false
	}
	re = re.Simplify()
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpWordBoundary {
		return false
	}
	prefixes, ok := literalPrefixes(re.Sub[1])
	if !ok || len(prefixes) == 0 {
		return false
	}
	for _, l := range prefixes {
		found := false
		for _, k := range keywords {
			if k != "" && isWordByte(k[0]) && strings.HasPrefix(l, k) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// maxLen is the most bytes a match of re can take, false when it is
// unbounded.
func maxLen(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0, true
	case syntax.OpLiteral:
		n := 0
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				n += utf8.UTFMax // a fold of c may be longer than c
			} else {
				n += utf8.RuneLen(c)
			}
		}
		return n, true
	case syntax.OpCharClass, syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return utf8.UTFMax, true
	case syntax.OpCapture:
		return maxLen(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			m, ok := maxLen(s)
			if !ok {
				return 0, false
			}
			if re.Op == syntax.OpConcat {
				n += m
			} else {
				n = max(n, m)
			}
		}
		return n, true
	case syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max < 0 {
			return 0, false
		}
		m, ok := maxLen(re.Sub[0])
		return m * re.Max, ok
	}
	return 0, false // star, plus
}

// literalPrefixes is the lower-cased literal every match of re begins
// with, one per alternative, or false when an alternative begins with
// anything else.
func literalPrefixes(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpCapture:
		return literalPrefixes(re.Sub[0])
	case syntax.OpAlternate:
		var all []string
		for _, s := range re.Sub {
			p, ok := literalPrefixes(s)
			if !ok {
				return nil, false
			}
			all = append(all, p...)
		}
		return all, true
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return nil, false
		}
		return literalPrefixes(re.Sub[0])
	case syntax.OpLiteral:
		l := strings.ToLower(string(re.Rune))
		if l == "" || !isASCIIString(l) {
			return nil, false
		}
		return []string{l}, true
	}
	return nil, false
}

func isASCIIString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// isWordByte is `\w` for one byte, as regexp's `\b` sees it.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// View is text with each of fs (Find's, in order, without overlaps)
// replaced by its Mark: what a reader of the file is shown.
func View(text []byte, fs []Finding) []byte {
	n := len(text)
	for _, f := range fs {
		n += len(Mark(f.Rule)) - (f.End - f.Start)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, f := range fs {
		out = append(out, text[at:f.Start]...)
		out = append(out, Mark(f.Rule)...)
		at = f.End
	}
	return append(out, text[at:]...)
}
