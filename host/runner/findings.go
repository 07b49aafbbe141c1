package runner

import (
	"debug/elf"
	"encoding/binary"
	"os"

	"github.com/moatdev/moat/host/confine"
	"github.com/moatdev/moat/host/redact"
)

// FindingsName is the name of cfg's findings cache file (Config.Findings),
// made by the process that decides cfg, whose roots are the host's paths:
// "" where there is none (no cache folder, --redact=false, or no build ID
// of this program to key it by).
func FindingsName(cfg Config) string {
	if cfg.CacheDir == "" || cfg.NoRedact {
		return ""
	}
	return confine.CacheName(redact.New().Digest(), buildID(), cfg.Dirs())
}

// buildID is this program's Go build ID, the linker's hash of what it was
// built from, read from its ELF note: a findings cache made by another
// build of moat (other code that finds, other rules) is never read. ""
// where there is none to read (another format than ELF, a build without
// one).
func buildID() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := elf.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return ""
	}
	b, err := sec.Data()
	// An ELF note: name size, description size, type, the name "Go" padded
	// to 4 bytes, then the description, the ID.
	if err != nil || len(b) < 16 || string(b[12:16]) != "Go\x00\x00" {
		return ""
	}
	n := binary.LittleEndian.Uint32(b[4:8])
	if f.ByteOrder == binary.BigEndian {
		n = binary.BigEndian.Uint32(b[4:8])
	}
	if uint64(n) > uint64(len(b)-16) {
		return ""
	}
	return string(b[16 : 16+n])
}
