package proto

import "strconv"

// FormatSize renders n bytes for a person or a model: "512 B", "1.2 KB",
// "3.1 MB". It is the one way moat writes a size, in the tools' answers
// (guest/tools) and in the host's activity lines and notices (host/agent).
//
// The units are SI: a KB is 1000 bytes, an MB 1000 KB, as the metric prefix
// says and as macOS and `ls --si` count. moat never writes KiB: one unit
// everywhere matters more than which one, and a model reads "KB" as 1000
// more often than not.
func FormatSize(n int64) string {
	const unit = 1000
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + "KMGTPE"[exp:exp+1] + "B"
}
