module github.com/moatdev/moat

go 1.26.8

require (
	github.com/BobuSumisu/aho-corasick v1.0.3 // host/redact's tests only: the reference its keyword pass (keywords.go: a two-byte table and no lower-cased copy, about 1.7x its speed on Go source, BenchmarkKeywords) is checked against, the Aho-Corasick library gitleaks itself uses for it
	github.com/BurntSushi/toml v1.6.0 // go generate only (host/redact/internal/rulesgen): reads gitleaks' default config, fetched as the module github.com/zricethezav/gitleaks/v8 through the module proxy, into the generated rules_gen.go, so moat takes gitleaks' rules as data and imports none of gitleaks' own dependencies
	github.com/aymanbagabas/go-udiff v0.4.1 // unified diffs for the write gate (a maintained port of gopls' diff; the brief asks for a well-kept diff library)
	github.com/bmatcuk/doublestar/v4 v4.10.4 // ** globbing for glob, grep's glob filter and the deny-list; pure Go, so it runs in the WASI guest
	github.com/google/jsonschema-go v0.4.3 // JSON Schemas derived from the argument structs, and their validation; the MCP SDK uses the same types
	github.com/landlock-lsm/go-landlock v0.11.2 // the sandbox child's Landlock rule set (NewRulesetFD), with best-effort downgrade of the network (ABI 4) and scope (ABI 6) rules to what the kernel has; the child enforces it on every thread itself, without /proc (isolate/landlock_linux.go)
	github.com/modelcontextprotocol/go-sdk v1.8.0 // moat mcp: the official MCP Go SDK (stdio transport, tool annotations, elicitation)
	github.com/ollama/ollama v0.17.4 // the official Ollama client (package api) for the native /api/chat, /api/tags and /api/show
	github.com/peterbourgon/ff/v3 v3.4.0 // ffcli.Command describes the subcommands and ff.PlainParser reads config lines; cmd/moat/flags.go applies flags, MOAT_* and the file itself, to take flags anywhere and name file:line in errors
	github.com/rogpeppe/go-internal v1.16.0 // testscript: the txtar script tests, with ttyin/ttyout for the approval gate's pty
	github.com/tetratelabs/wazero v1.12.0 // the WebAssembly runtime the tool guest runs in: pure Go, no cgo, compile cache
	golang.org/x/sys v0.50.0 // openat2 RESOLVE_BENEATH, namespaces, seccomp, Landlock and prctl calls
	golang.org/x/term v0.48.0 // moat chat's line editing and history, terminal detection for the gate, the terminal's width for help
	golang.org/x/text v0.34.0 // the deny-list compares names under full Unicode case folding (cases.Fold) and NFC/NFD (unicode/norm), as case-insensitive file systems do
)

require (
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/buger/jsonparser v1.1.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/kr/pretty v0.3.0 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/wk8/go-ordered-map/v2 v2.1.8 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/crypto v0.48.0 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	golang.org/x/tools v0.42.0 // indirect
	gopkg.in/check.v1 v1.0.0-20201130134442-10cb98267c6c // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
)
