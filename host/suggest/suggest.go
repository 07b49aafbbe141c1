// Package suggest finds the nearest of a set of names to one that was
// mistyped: a flag, a config key, an MCP tool. It is the one place the
// distance between two names is measured, so every "did you mean" in moat
// agrees on what is near.
package suggest

// Distance is the Levenshtein distance between a and b, counted in bytes
// (names are ASCII). A name over 256 bytes is no one's typo: its distance
// is its length, without the quadratic work.
func Distance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
