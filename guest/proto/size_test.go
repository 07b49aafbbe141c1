package proto

import "testing"

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 512: "512 B", 999: "999 B", 1000: "1.0 KB", 1024: "1.0 KB", 1234: "1.2 KB",
		3_100_000: "3.1 MB", 4 << 30: "4.3 GB", 1 << 62: "4.6 EB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
