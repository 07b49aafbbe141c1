package match

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// A foldLit finds a case-folded literal in one pass: regexp's (?i)
// matches each of its runes with any rune of that rune's folding orbit
// (k also with the Kelvin sign, s with the long s, ß with ẞ), forms of
// different byte lengths. Every form of the literal is at least n bytes
// long, and its j-th byte is in the set of bytes that some form can hold
// at j: a classSeq over those sets skips the text Horspool's way (a
// window a step where the letters are rare), and each window it finds is
// compared rune by rune. Searching for the ASCII forms ignoring case and
// then, in a second pass, for the other forms (a Kelvin sign, a long s)
// cost two passes over text that has neither.
type foldLit struct {
	seq *classSeq
	// back: seq looks for the last n bytes of every form instead (the
	// literal's end is rarer), and a window is compared from its end.
	back bool
	// forms holds, for each rune of the literal, the UTF-8 of every rune
	// of its orbit; no form is a prefix (or a suffix) of another.
	forms [][][]byte
	// pair, when set, finds the literal instead (foldPair).
	pair *foldPair
}

// newFoldLit returns the foldLit of a literal searched for under (?i),
// or nil when it is too short for the skips to pay, or holds a rune that
// also matches invalid UTF-8 (U+FFFD) or a newline.
func newFoldLit(runes []rune) *foldLit {
	f := &foldLit{forms: newFoldLitForms(runes)}
	if f.forms == nil {
		return nil
	}
	n := 0
	for _, forms := range f.forms {
		shortest := utf8.UTFMax
		for _, form := range forms {
			shortest = min(shortest, len(form))
		}
		n += shortest
	}
	n = min(n, maxSeq)
	if n < minSeq {
		return nil
	}
	front := formClasses(f.forms, n)
	back := formClasses(reversed(f.forms), n)
	slices.Reverse(back)
	f.back = byteShare(&back[n-1]) < byteShare(&front[n-1])
	if f.back {
		front = back
	}
	f.seq = newClassSeq(front)
	f.pair = newFoldPair(f.forms, maxPairShare)
	return f
}

// newFoldLitForms returns the forms of each rune of a literal under (?i)
// (foldLit.forms), or nil when a rune also matches invalid UTF-8 (U+FFFD)
// or is a newline.
func newFoldLitForms(runes []rune) [][][]byte {
	var out [][][]byte
	for _, r := range runes {
		if r == utf8.RuneError || r == '\n' || !utf8.ValidRune(r) {
			return nil
		}
		var forms [][]byte
		for o := r; ; {
			forms = append(forms, utf8.AppendRune(nil, o))
			if o = unicode.SimpleFold(o); o == r {
				break
			}
		}
		out = append(out, forms)
	}
	return out
}

// formClasses returns the bytes some form can hold at each of its first
// n bytes (of each form reversed, when forms are).
func formClasses(forms [][][]byte, n int) []byteClass {
	classes := make([]byteClass, n)
	starts := map[int]bool{0: true} // where the rune at hand can start
	for _, rf := range forms {
		next := map[int]bool{}
		for s := range starts {
			for _, form := range rf {
				for o, c := range form {
					if s+o < n {
						classes[s+o][c] = true
					}
				}
				if s+len(form) < n {
					next[s+len(form)] = true
				}
			}
		}
		starts = next
	}
	return classes
}

// reversed returns the literal's runes in reverse order, each form's
// bytes reversed.
func reversed(forms [][][]byte) [][][]byte {
	out := make([][][]byte, len(forms))
	for i, rf := range forms {
		for _, form := range rf {
			r := slices.Clone(form)
			slices.Reverse(r)
			out[len(forms)-1-i] = append(out[len(forms)-1-i], r)
		}
	}
	return out
}

// index returns the offset of the first occurrence of the literal in b, or
// -1. (Occurrences end in the order they start: one cannot hold another.)
func (f *foldLit) index(b []byte) int {
	if f.pair != nil {
		return f.pairIndex(b)
	}
	for from := 0; ; {
		i := f.seq.index(b[from:])
		if i < 0 {
			return -1
		}
		i += from
		if !f.back {
			if f.fwd(b[i:], 0) {
				return i
			}
		} else if s := f.bwd(b[:i+f.seq.n], len(f.forms)); s >= 0 {
			return s
		}
		from = i + 1
	}
}
