package redact

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
)

// Digest is a hash of everything r finds by: every rule's data (its id,
// regex, keywords, secret group, entropy and allowlists) in order, and
// the global allowlist. Two Redactors of the same Digest find the same
// secrets in the same text, as far as their code is the same: a cache of
// findings (host/confine's) keys by it and by the build of the program
// too.
func (r *Redactor) Digest() [32]byte {
	h := sha256.New()
	var n [8]byte
	num := func(v uint64) {
		binary.LittleEndian.PutUint64(n[:], v)
		h.Write(n[:])
	}
	str := func(s string) {
		num(uint64(len(s)))
		h.Write([]byte(s))
	}
	strs := func(l []string) {
		num(uint64(len(l)))
		for _, s := range l {
			str(s)
		}
	}
	allowD := func(a allowData) {
		flags := uint64(0)
		if a.and {
			flags |= 1
		}
		if a.pathsOrCommits {
			flags |= 2
		}
		num(flags)
		str(a.target)
		strs(a.regexes)
		strs(a.stopwords)
	}
	str("moat redact rules")
	num(uint64(len(r.rules)))
	for _, ru := range r.rules {
		d := ru.ruleData
		str(d.id)
		str(d.regex)
		strs(d.keywords)
		num(uint64(d.secretGroup))
		num(math.Float64bits(d.entropy))
		num(uint64(ru.shape))
		num(uint64(len(d.allow)))
		for _, a := range d.allow {
			allowD(a)
		}
	}
	allowD(r.globalD)
	var out [32]byte
	h.Sum(out[:0])
	return out
}
