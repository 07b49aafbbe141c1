package match

// Aho-Corasick for large literal sets (a keyword list of hundreds of
// words): one table lookup per byte of text, whatever the number of
// literals, where a regex program's states would each hold a thread per
// word. The libraries on offer did not fit the guest: one keeps a
// [256]int64 row per trie node (14 MB for 1000 words) and follows failure
// links as it scans, another reports which words occur but not where. This
// one is a dense DFA over byte classes (the bytes the literals tell apart),
// built once, with ASCII case folding for (?i) literals.

// acMatcher finds occurrences of any of a set of literals.
type acMatcher struct {
	class  [256]uint8
	stride int
	// trans holds each state's row, indexed by byte class; an entry is
	// the next state's row offset, bitwise negated (so negative) when a
	// literal ends in that state.
	trans []int32
	// outLen is, per state, the length of a literal ending there (0 for
	// none).
	outLen []int32
}

// maxACEntries bounds the automaton's table (4 bytes an entry): a row of
// a few dozen classes per trie node, a node per literal byte at most.
const maxACEntries = 4 << 20

// newAC builds the automaton of lits, all folded (lower-case ASCII, found
// whatever the case of its ASCII letters) when fold. It returns nil for an
// empty set, an empty literal, or a set past maxACEntries.
func newAC(lits [][]byte, fold bool) *acMatcher {
	if len(lits) == 0 {
		return nil
	}
	a := &acMatcher{}
	// Byte classes: bytes that no literal tells apart share one.
	var used [256]bool
	for _, l := range lits {
		if len(l) == 0 {
			return nil
		}
		for _, c := range l {
			used[c] = true
		}
	}
	n := uint8(1) // class 0: bytes in no literal
	for c := range 256 {
		b := byte(c)
		if fold {
			b = lower(b)
		}
		if used[b] {
			if a.class[b] == 0 {
				a.class[b] = n
				n++
			}
			a.class[c] = a.class[b]
		}
	}
	a.stride = int(n)
	// The trie: goto[s*stride+k] is the child of node s on class k, or 0.
	type node struct{ out int32 }
	total := 1 // nodes at most: one a literal byte, and the root
	for _, l := range lits {
		total += len(l)
	}
	total = min(total, maxACEntries/a.stride+1)
	nodes := make([]node, 1, total)
	next := make([]int32, a.stride, total*a.stride) // root's row
	for _, l := range lits {
		s := 0
		for _, c := range l {
			k := int(a.class[c])
			if next[s*a.stride+k] == 0 {
				if (len(nodes)+1)*a.stride > maxACEntries {
					return nil
				}
				nodes = append(nodes, node{})
				next = append(next, make([]int32, a.stride)...)
				next[s*a.stride+k] = int32(len(nodes) - 1)
			}
			s = int(next[s*a.stride+k])
		}
		if nodes[s].out == 0 {
			nodes[s].out = int32(len(l))
		}
	}
	// Breadth first: each node's failure link, its output (its own or its
	// failure's), and its row with every missing child filled from the
	// failure's row, which is complete already.
	fail := make([]int32, len(nodes))
	queue := make([]int32, 0, len(nodes))
	for k := 0; k < a.stride; k++ {
		if c := next[k]; c != 0 {
			queue = append(queue, c)
		}
	}
	for qi := 0; qi < len(queue); qi++ {
		s := queue[qi]
		if nodes[s].out == 0 {
			nodes[s].out = nodes[fail[s]].out
		}
		for k := 0; k < a.stride; k++ {
			c := next[int(s)*a.stride+k]
			f := next[int(fail[s])*a.stride+k]
			if c == 0 {
				next[int(s)*a.stride+k] = f
				continue
			}
			fail[c] = f
			queue = append(queue, c)
		}
	}
	// The table in place of the trie's rows: each entry is read once,
	// where it is written.
	a.trans = next
	a.outLen = make([]int32, len(nodes))
	for s := range nodes {
		a.outLen[s] = nodes[s].out
		for k := 0; k < a.stride; k++ {
			t := next[s*a.stride+k]
			v := t * int32(a.stride)
			if nodes[t].out != 0 {
				v = ^v
			}
			a.trans[s*a.stride+k] = v
		}
	}
	return a
}

// index returns the offset in b of the occurrence of a literal that ends
// first, or -1. Literals hold no '\n', so it lies in the first line of b
// that holds any.
func (a *acMatcher) index(b []byte) int {
	trans, class := a.trans, &a.class
	s := int32(0)
	i := 0
	// Four bytes a step: the loop's own cost is much of it under wasm.
	for ; i+4 <= len(b); i += 4 {
		w := b[i : i+4 : i+4]
		if s = trans[int(s)+int(class[w[0]])]; s < 0 {
			return a.found(s, i)
		}
		if s = trans[int(s)+int(class[w[1]])]; s < 0 {
			return a.found(s, i+1)
		}
		if s = trans[int(s)+int(class[w[2]])]; s < 0 {
			return a.found(s, i+2)
		}
		if s = trans[int(s)+int(class[w[3]])]; s < 0 {
			return a.found(s, i+3)
		}
	}
	for ; i < len(b); i++ {
		if s = trans[int(s)+int(class[b[i]])]; s < 0 {
			return a.found(s, i)
		}
	}
	return -1
}

// found is the start of the literal ending at i in the (negated) state s.
func (a *acMatcher) found(s int32, i int) int {
	return i + 1 - int(a.outLen[int(^s)/a.stride])
}
