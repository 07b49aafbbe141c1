package policy

import "strings"

// gitCommandKeys are the git configuration keys whose value git runs as a
// command, or that bring in configuration (includes) or transports that
// do, from git-config(1) (https://git-scm.com/docs/git-config). A key is
// "section.name", or "section.*.name" for any subsection; the section
// names "pager" and (with a value starting "!") "alias" and
// "submodule.*.update" are handled in [gitCommand].
var gitCommandKeys = map[string]bool{
	"core.fsmonitor": true, "core.hookspath": true, "core.sshcommand": true, "core.editor": true,
	"core.pager": true, "core.askpass": true, "core.gitproxy": true, "core.alternaterefscommand": true,
	"sequence.editor": true, "diff.external": true, "interactive.difffilter": true,
	"credential.helper": true, "credential.*.helper": true,
	"filter.*.clean": true, "filter.*.smudge": true, "filter.*.process": true,
	"diff.*.command": true, "diff.*.textconv": true, "merge.*.driver": true,
	"mergetool.*.cmd": true, "mergetool.*.path": true, "difftool.*.cmd": true, "difftool.*.path": true,
	"gpg.program": true, "gpg.*.program": true, "gpg.*.defaultkeycommand": true,
	"uploadpack.packobjectshook": true, "remote.*.uploadpack": true, "remote.*.receivepack": true, "remote.*.vcs": true,
	"protocol.allow": true, "protocol.*.allow": true, // ext:: runs any command as a transport
	"sendemail.smtpserver": true, "sendemail.*.smtpserver": true, "sendemail.sendmailcmd": true, "sendemail.*.sendmailcmd": true,
	"sendemail.tocmd": true, "sendemail.*.tocmd": true, "sendemail.cccmd": true, "sendemail.*.cccmd": true,
	"sendemail.headercmd": true, "sendemail.*.headercmd": true,
	"imap.tunnel": true, "web.browser": true, "browser.*.cmd": true, "browser.*.path": true,
	"man.*.cmd": true, "man.*.path": true, "guitool.*.cmd": true, "instaweb.httpd": true, "instaweb.browser": true,
	"trailer.*.command": true, "trailer.*.cmd": true, "tar.*.command": true, "hook.*.command": true,
	"include.path": true, "includeif.*.path": true,
	// other programs' keys in git's config: Git LFS's transfer agents and
	// extensions (https://github.com/git-lfs/git-lfs/blob/main/docs/man/git-lfs-config.adoc),
	// git-secrets' providers, git help's browser
	// (lfs.customtransfer.NAME.path and .args, lfs.extension.NAME.clean
	// and .smudge: their subsections, "customtransfer.NAME", in gitCommand)
	"lfs.standalonetransferagent": true,
	"secrets.providers":           true, "help.browser": true,
}

// GitConfigCommand reports whether content, read as git reads a
// configuration file, sets a key that makes git run a command (see
// gitCommandKeys), and names the first such key. It parses as git's
// config.c does (sections "[core]", "[filter \"x\"]" and "[a.b]", a key
// on the header's own line, values continued with a backslash, quotes,
// "#" and ";" comments, CRLF), stops where git would fail with "bad
// config line" (git then refuses the whole file), and reports keys seen
// up to there. The gate asks it about every file it writes, wherever it
// lands: a folder becomes a repository by structure (see [GitDir]), and
// config can be included from anywhere.
func GitConfigCommand(content []byte) (key string, ok bool) {
	p := gitConfigParser{s: string(content)}
	p.s = strings.TrimPrefix(p.s, "\ufeff")
	p.parse(func(name string, value string, hasValue bool) bool {
		if gitCommand(name, value, hasValue) {
			key, ok = name, true
			return false
		}
		return true
	})
	return key, ok
}

// gitCommand decides one key, lower-cased "section[.sub].name".
func gitCommand(name, value string, hasValue bool) bool {
	first := strings.IndexByte(name, '.')
	last := strings.LastIndexByte(name, '.')
	if first < 0 {
		return false
	}
	section, key := name[:first], name[last+1:]
	bang := hasValue && strings.HasPrefix(strings.TrimSpace(value), "!")
	if first == last {
		switch section {
		case "pager":
			return true
		case "alias":
			return bang || aliasRunsProgram(value)
		}
		return gitCommandKeys[name]
	}
	if section == "submodule" && key == "update" {
		return bang
	}
	if section == "lfs" {
		sub := name[first+1 : last]
		switch {
		case strings.HasPrefix(sub, "customtransfer.") && (key == "path" || key == "args"),
			strings.HasPrefix(sub, "extension.") && (key == "clean" || key == "smudge"):
			return true
		}
	}
	return gitCommandKeys[section+".*."+key]
}

// aliasRunsProgram reports whether an alias's value (not a "!" one) gives
// git options that change its configuration or which programs it runs:
// git runs "alias.st = -c core.fsmonitor=CMD status" as "git -c
// core.fsmonitor=CMD status", and so runs CMD. Refused: git's own options
// -c, --config-env, --exec-path, -C, --git-dir, --work-tree and
// --namespace (another repository's config, another folder of git's
// programs) anywhere in the value; the subcommands config (it sets any
// key) and filter-branch, instaweb and daemon; rebase's and difftool's -x
// and --exec/--extcmd; bisect run; submodule foreach; and the options
// that name a program to run: --upload-pack, --receive-pack, --exec,
// --extcmd, --open-files-in-pager (-O), --httpd, --browser. The value is
// split at white space as git's split_cmdline splits it, quotes removed.
func aliasRunsProgram(value string) bool {
	args := splitCmdline(value)
	sub := ""
	for _, a := range args {
		low := strings.ToLower(a)
		for _, o := range []string{"-c", "--config-env", "--exec-path", "--git-dir", "--work-tree", "--namespace",
			"--upload-pack", "--receive-pack", "--exec", "--extcmd", "--open-files-in-pager", "--httpd", "--browser", "--super-prefix"} {
			if low == o || strings.HasPrefix(low, o+"=") || o == "-c" && strings.HasPrefix(a, "-c") && !strings.HasPrefix(a, "--") {
				return true
			}
		}
		if a == "-C" || strings.HasPrefix(a, "-O") {
			return true
		}
		if sub == "" && !strings.HasPrefix(a, "-") {
			sub = low
			switch sub {
			case "config", "filter-branch", "instaweb", "daemon":
				return true
			}
			continue
		}
		switch {
		case (sub == "rebase" || sub == "difftool") && (a == "-x" || strings.HasPrefix(a, "-x")):
			return true
		case sub == "bisect" && low == "run", sub == "submodule" && low == "foreach":
			return true
		}
	}
	return false
}

// splitCmdline splits an alias's value as git's split_cmdline does:
// at spaces and tabs outside quotes, single and double quotes removed, a
// backslash escaping the next character outside single quotes.
func splitCmdline(s string) []string {
	var (
		out   []string
		cur   strings.Builder
		quote byte
		in    bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == 0 && (c == ' ' || c == '\t' || c == '\n'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
			continue
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote != 0 && c == quote:
			quote = 0
		case c == '\\' && quote != '\'' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		default:
			cur.WriteByte(c)
		}
		in = true
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// gitConfigParser is a port of the parser in git's config.c
// (git_parse_source, get_base_var, get_extended_base_var, get_value,
// parse_value), reduced to what decides which keys a file sets.
type gitConfigParser struct {
	s   string
	i   int
	eof bool
}

// next is get_next_char: "\r\n" reads as "\n", and the end of the text
// reads as a final "\n".
func (p *gitConfigParser) next() byte {
	if p.i >= len(p.s) {
		p.eof = true
		return '\n'
	}
	c := p.s[p.i]
	p.i++
	if c == '\r' && p.i < len(p.s) && p.s[p.i] == '\n' {
		p.i++
		return '\n'
	}
	return c
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func isKeyChar(c byte) bool {
	return isAlpha(c) || '0' <= c && c <= '9' || c == '-'
}
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// parse calls fn for each key until fn returns false, the text ends, or
// a line git would reject.
func (p *gitConfigParser) parse(fn func(name, value string, hasValue bool) bool) {
	var section []byte
	comment := false
	for {
		c := p.next()
		switch {
		case c == '\n':
			if p.eof {
				return
			}
			comment = false
		case comment || isSpace(c):
		case c == '#' || c == ';':
			comment = true
		case c == '[':
			s, ok := p.header()
			if !ok {
				return
			}
			section = append(s, '.')
		case !isAlpha(c):
			return
		default:
			name := append(append([]byte(nil), section...), lower(c))
			value, hasValue, ok := p.value(&name)
			if !ok {
				return
			}
			if !fn(string(name), value, hasValue) {
				return
			}
		}
	}
}

// header is get_base_var: "[section]", "[section.sub]" (lower-cased) or
// "[section \"sub\"]" (the subsection kept as written, then lower-cased
// here because the rules match any subsection).
func (p *gitConfigParser) header() ([]byte, bool) {
	var name []byte
	for {
		c := p.next()
		switch {
		case p.eof:
			return nil, false
		case c == ']':
			return name, len(name) > 0
		case isSpace(c):
			return p.subsection(name)
		case !isKeyChar(c) && c != '.':
			return nil, false
		}
		name = append(name, lower(c))
	}
}

// subsection is get_extended_base_var.
func (p *gitConfigParser) subsection(name []byte) ([]byte, bool) {
	c := p.next()
	for isSpace(c) && c != '\n' {
		c = p.next()
	}
	if c != '"' {
		return nil, false
	}
	name = append(name, '.')
	for {
		c = p.next()
		if c == '\n' {
			return nil, false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				return nil, false
			}
		}
		name = append(name, lower(c))
	}
	if p.next() != ']' {
		return nil, false
	}
	return name, true
}

// value is get_value and parse_value: the rest of the key's name, then
// "= value" or nothing (a boolean true).
func (p *gitConfigParser) value(name *[]byte) (string, bool, bool) {
	c := p.next()
	for !p.eof && isKeyChar(c) {
		*name = append(*name, lower(c))
		c = p.next()
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	if c == '\n' {
		return "", false, true
	}
	if c != '=' {
		return "", false, false
	}
	var v []byte
	quote, comment, space := false, false, 0
	for {
		c := p.next()
		switch {
		case c == '\n':
			return string(v), true, !quote
		case comment:
			continue
		case isSpace(c) && !quote:
			if len(v) > 0 {
				space++
			}
			continue
		case !quote && (c == ';' || c == '#'):
			comment = true
			continue
		}
		for ; space > 0; space-- {
			v = append(v, ' ')
		}
		switch c {
		case '\\':
			switch c = p.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false, false
			}
			v = append(v, c)
		case '"':
			quote = !quote
		default:
			v = append(v, c)
		}
	}
}
