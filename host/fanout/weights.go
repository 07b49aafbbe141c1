package fanout

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/moatdev/moat/guest/proto"
	"github.com/moatdev/moat/guest/tools"
	"github.com/moatdev/moat/host/atomicfile"
)

// The weights file keeps what a Splitter learned of a tree's folders
// (Weights) for the next process over the same roots: a one-shot `moat
// tool grep` learns nothing of its own before it deals the work, so
// without them a heavy folder goes whole to one share. Its name is the
// roots' (host/runner WeightsName); a file of another tree, or a damaged
// one, can only deal the work badly: the answer is the same whatever the
// weights say (guest/tools TestShardedGrepWeightsEqualsOne), and Remember
// checks and bounds what it keeps.

// weightsVersion is the file's format; a file of another is not read.
const weightsVersion = 1

// maxWeightsFile bounds the file read: maxLearned folders of long paths.
const maxWeightsFile = 4 << 20

type weightsFile struct {
	Version int                  `json:"version"`
	Weights []proto.FolderWeight `json:"weights"`
}

// LoadWeights reads the weights file at path: nil when there is none, or
// it is not one this version wrote.
func LoadWeights(path string) []proto.FolderWeight {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxWeightsFile+1))
	if err != nil || len(b) > maxWeightsFile {
		return nil
	}
	var w weightsFile
	if json.Unmarshal(b, &w) != nil || w.Version != weightsVersion {
		return nil
	}
	return w.Weights
}

// SaveWeights writes ws to the weights file at path (0600), whole or not
// at all, in a folder it makes (0700) if need be. What it writes is what
// a Balance keeps of ws (tools.Balance Remember): the isolated child's
// report is bounded and checked before the parent keeps it.
func SaveWeights(path string, ws []proto.FolderWeight) error {
	var kept tools.Balance
	kept.Remember(ws)
	ws = kept.Weights()
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(weightsFile{Version: weightsVersion, Weights: ws})
	if err != nil {
		return err
	}
	return atomicfile.Write(path, b, false)
}
