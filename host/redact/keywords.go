package redact

// keywordFinder finds every occurrence of a set of lower-case keywords
// (of two bytes or more) in text compared lower-cased, as an Aho-Corasick
// walk over the lower-cased text does, without the copy: a table indexed
// by the two bytes at each position, as they are (every case of a
// keyword's first two is in it), names the keywords that begin with them
// (most positions begin none), and each of those is compared on.
// It is the prefilter every file the guest reads passes through, so its
// speed is the redacted view's cost on a file with no secret.
type keywordFinder struct {
	// first[a<<8|b] is 1 + the index in groups of the keywords that
	// begin with the bytes a, b in any case; 0: none.
	first  []uint16
	groups [][]kw
}

type kw struct {
	rest    string // the keyword after its first two bytes
	n       int    // the keyword's length
	pattern int    // its number
}

// fold is ASCII lower case.
func fold(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func newKeywordFinder(words []string) *keywordFinder {
	k := &keywordFinder{first: make([]uint16, 1<<16)}
	for i, w := range words {
		if len(w) < 2 {
			continue // the callers have none; a one-byte keyword would be every such byte
		}
		at := int(w[0])<<8 | int(w[1])
		if k.first[at] == 0 {
			k.groups = append(k.groups, nil)
			g := uint16(len(k.groups))
			for _, a := range cases(w[0]) {
				for _, b := range cases(w[1]) {
					k.first[int(a)<<8|int(b)] = g
				}
			}
		}
		g := int(k.first[at]) - 1
		k.groups[g] = append(k.groups[g], kw{rest: w[2:], n: len(w), pattern: i})
	}
	return k
}

// each calls f with the start of every occurrence of a keyword in text
// and the keyword's number, in order of their starts (and for one start,
// in the keywords' order).
func (k *keywordFinder) each(text string, f func(start, pattern int)) {
	if len(text) < 2 {
		return
	}
	first := k.first[:1<<16]
	for i := 1; i < len(text); i++ {
		g := first[uint16(text[i-1])<<8|uint16(text[i])]
		if g == 0 {
			continue
		}
		start := i - 1
		for _, w := range k.groups[g-1] {
			if start+w.n <= len(text) && equalFold(text[i+1:start+w.n], w.rest) {
				f(start, w.pattern)
			}
		}
	}
}

// cases is c in each case: c, and its upper case for a lower-case letter.
func cases(c byte) []byte {
	if 'a' <= c && c <= 'z' {
		return []byte{c, c - 'a' + 'A'}
	}
	return []byte{c}
}

// equalFold reports whether s lower-cased is low.
func equalFold(s, low string) bool {
	for j := 0; j < len(low); j++ {
		if fold(s[j]) != low[j] {
			return false
		}
	}
	return true
}
