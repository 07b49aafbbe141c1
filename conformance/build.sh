#!/usr/bin/env bash
# build.sh OUT: builds ollamareal (see main.go) into OUT, unless OUT already
# holds the build of these exact inputs. make conformance runs it.
#
# Ollama's server package cannot be built as it is without cgo and
# llama.cpp, and go build -overlay may not replace files in the module
# cache, so the module is vendored here (go mod vendor: a copy of the
# packages as the module proxy serves them; nothing of it is edited) and
# the overlay adds or replaces four files in vendor/ (see _overlay/).
# CGO_ENABLED=0 makes it one pure-Go binary; -trimpath keeps Go's build
# cache independent of where the clone is.
set -euo pipefail
cd "$(dirname "$0")"
out=$1
sha() { if command -v sha256sum >/dev/null; then sha256sum; else shasum -a 256; fi; }
key=$( { go env GOVERSION GOOS GOARCH; cat build.sh go.mod go.sum ./*.go _overlay/*.go templates/*; } | sha | cut -c1-16)
if [ -x "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
  echo "ollamareal: up to date ($out, inputs $key)"
  exit 0
fi
t0=$(date +%s)
go mod download
go mod vendor
v=$(pwd)/vendor/github.com/ollama/ollama
o=$(pwd)/_overlay
overlay=$(mktemp)
trap 'rm -f "$overlay"' EXIT
cat > "$overlay" <<JSON
{"Replace": {
  "$v/llama/zz_moat_llama.go": "$o/llama.go",
  "$v/ml/backend/backend.go": "$o/backend.go",
  "$v/ml/backend/ggml/zz_moat_quant.go": "$o/ggml_quant.go",
  "$v/server/zz_moat_runner.go": "$o/server_runner.go"
}}
JSON
ver=$(go list -m -f '{{.Version}}' github.com/ollama/ollama)
mkdir -p "$(dirname "$out")"
CGO_ENABLED=0 go build -mod=vendor -trimpath -overlay "$overlay" \
  -ldflags "-X github.com/ollama/ollama/version.Version=${ver#v}" -o "$out.tmp" .
mv "$out.tmp" "$out"
echo "$key" > "$out.key"
echo "ollamareal: built $out (Ollama $ver, inputs $key) in $(( $(date +%s) - t0 ))s"
