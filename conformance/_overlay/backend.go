// Replaces github.com/ollama/ollama/ml/backend/backend.go in the vendored
// copy (go build -overlay): the original's only content is a blank import
// of the cgo ggml backend, which a CGO_ENABLED=0 build cannot link.

package backend
