// Added to the vendored package github.com/ollama/ollama/ml/backend/ggml by
// go build -overlay: package server refers to these two cgo functions
// (quantizing a model in /api/create), whose file drops out with
// CGO_ENABLED=0. The conformance models are never quantized.

package ggml

import fsggml "github.com/ollama/ollama/fs/ggml"

func ConvertToF32([]byte, uint32, uint64) []float32 {
	panic("moat conformance build: quantization needs cgo")
}

func Quantize(fsggml.TensorType, []float32, []uint64) []byte {
	panic("moat conformance build: quantization needs cgo")
}
