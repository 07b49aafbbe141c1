// Added to the vendored package github.com/ollama/ollama/llama by
// go build -overlay (see ../build.sh). With CGO_ENABLED=0 the package's
// cgo binding to llama.cpp drops out, but llm/ and sample/ still name these
// identifiers. The conformance server never loads weights: the scripted
// generator in server/zz_moat_runner.go takes the runner's place.

package llama

import "errors"

var errNoLlama = errors.New("moat conformance build: llama.cpp is not compiled in")

type Model struct{}

type ModelParams struct {
	Devices      []uint64
	NumGpuLayers int
	MainGpu      int
	UseMmap      bool
	VocabOnly    bool
	TensorSplit  []float32
	Progress     func(float32)
}

func LoadModelFromFile(string, ModelParams) (*Model, error) { return nil, errNoLlama }
func FreeModel(*Model)                                      {}

func (*Model) TokenToPiece(int) string                    { return "" }
func (*Model) Tokenize(string, bool, bool) ([]int, error) { return nil, errNoLlama }

// SchemaToGrammar is only asked for a grammar the runner would enforce;
// the scripted runner enforces none, so any text will do.
func SchemaToGrammar([]byte) []byte { return []byte("root ::= .*\n") }

type TokenData struct {
	ID    int32
	Logit float32
}

type Grammar struct{}

func NewGrammar(string, []uint32, []string, []int32) *Grammar { return nil }
func (*Grammar) Free()                                        {}
func (*Grammar) Apply([]TokenData)                            {}
func (*Grammar) Accept(int32)                                 {}
