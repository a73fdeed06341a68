package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfsim/perfsim/hardware"
	"github.com/perfsim/perfsim/workloads"
)

const completionSynopsis = "perfsim completion bash|zsh|fish"

const completionHelp = `Usage: ` + completionSynopsis + `

Prints a shell completion script for perfsim: commands, subcommands, each
command's flags, and the catalog's hardware and model names after --hw and
--model (files complete as usual).

  # bash: for this shell, or for every shell from ~/.bashrc
  source <(perfsim completion bash)
  # zsh (uses bash's completion through bashcompinit)
  source <(perfsim completion zsh)
  # fish
  perfsim completion fish > ~/.config/fish/completions/perfsim.fish

Exit status: 0 success, 1 failure, 2 usage error or bad input file.
`

// subcommands lists the subcommands of the commands that have them, in
// the order completion offers them.
func subcommands() map[string][]string {
	return map[string][]string{
		"plot":      sortedKeys(plotKinds()),
		"hardware":  {"list", "show"},
		"plan":      {"serve", "train"},
		"calibrate": {"fit", "validate", "merge", "measure"},
		"kernel":    {"gemm", "copy"},
	}
}

// A completionSpec is what completion offers: the commands with their
// summaries, the subcommands, and each command's (or "command sub"'s)
// flags, read off its --help.
type completionSpec struct {
	commands  []string
	summaries map[string]string
	subs      map[string][]string
	flags     map[string][]string // "simulate", "plot roofline"
	hw        []string
	models    []string
}

var helpFlag = regexp.MustCompile(`(?m)^\s+(?:-[a-zA-Z], )?--([a-z0-9][a-z0-9-]*)`)

// flagsOf returns the long flags args' --help lists, sorted.
func flagsOf(ctx context.Context, args ...string) []string {
	var out, errb bytes.Buffer
	run(ctx, append(args, "--help"), &out, &errb)
	seen := map[string]bool{}
	var flags []string
	for _, m := range helpFlag.FindAllStringSubmatch(out.String()+errb.String(), -1) {
		if f := "--" + m[1]; !seen[f] {
			seen[f] = true
			flags = append(flags, f)
		}
	}
	sort.Strings(flags)
	return flags
}

func newCompletionSpec(ctx context.Context) completionSpec {
	cmds := commands()
	s := completionSpec{summaries: map[string]string{}, subs: subcommands(), flags: map[string][]string{}}
	for _, c := range sortedKeys(cmds) {
		s.commands = append(s.commands, c)
		s.summaries[c] = cmds[c].summary
		if subs, ok := s.subs[c]; ok {
			for _, sub := range subs {
				s.flags[c+" "+sub] = flagsOf(ctx, c, sub)
			}
			continue
		}
		if c != "completion" {
			s.flags[c] = flagsOf(ctx, c)
		}
	}
	s.hw = append(hardware.CatalogAliases(), hardware.SystemNames()...)
	s.models = workloads.CatalogNames()
	return s
}

func runCompletionCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stderr, completionHelp)
		return pflag.ErrHelp
	}
	if len(args) != 1 {
		return usagef("completion: give one shell: bash, zsh or fish")
	}
	s := newCompletionSpec(ctx)
	switch args[0] {
	case "bash":
		return writeBash(stdout, s, false)
	case "zsh":
		return writeBash(stdout, s, true)
	case "fish":
		return writeFish(stdout, s)
	}
	return usagef("completion: unknown shell %q (want bash, zsh or fish)", args[0])
}

func words(ws []string) string { return strings.Join(ws, " ") }

// writeBash writes the bash script; zsh loads the same function through
// bashcompinit.
func writeBash(w io.Writer, s completionSpec, zsh bool) error {
	var b strings.Builder
	b.WriteString("# perfsim completion (perfsim completion --help)\n")
	if zsh {
		b.WriteString("autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n")
	}
	b.WriteString("_perfsim() {\n")
	b.WriteString("    local cur prev\n")
	b.WriteString("    cur=\"${COMP_WORDS[COMP_CWORD]}\"\n")
	b.WriteString("    prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n")
	b.WriteString("    case \"$prev\" in\n")
	fmt.Fprintf(&b, "        --hw) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", words(s.hw))
	fmt.Fprintf(&b, "        --model) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", words(s.models))
	b.WriteString("    esac\n")
	b.WriteString("    if [ \"$COMP_CWORD\" -eq 1 ]; then\n")
	fmt.Fprintf(&b, "        COMPREPLY=($(compgen -W %q -- \"$cur\")); return\n", words(s.commands))
	b.WriteString("    fi\n")
	b.WriteString("    local key=\"${COMP_WORDS[1]}\"\n")
	b.WriteString("    case \"$key\" in\n")
	for _, c := range s.commands {
		if subs, ok := s.subs[c]; ok {
			fmt.Fprintf(&b, "        %s)\n", c)
			b.WriteString("            if [ \"$COMP_CWORD\" -eq 2 ]; then\n")
			fmt.Fprintf(&b, "                COMPREPLY=($(compgen -W %q -- \"$cur\")); return\n", words(subs))
			b.WriteString("            fi\n")
			b.WriteString("            key=\"$key ${COMP_WORDS[2]}\" ;;\n")
		}
	}
	b.WriteString("    esac\n")
	b.WriteString("    local flags=\"\"\n")
	b.WriteString("    case \"$key\" in\n")
	for _, k := range sortedKeys(s.flags) {
		ws := s.flags[k]
		if k == "hardware show" {
			ws = append(append([]string{}, ws...), s.hw...) // perfsim hardware show NAME
		}
		fmt.Fprintf(&b, "        %q) flags=%q ;;\n", k, words(ws))
	}
	b.WriteString("        completion) flags=\"bash zsh fish\" ;;\n")
	b.WriteString("    esac\n")
	b.WriteString("    COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n")
	b.WriteString("}\n")
	b.WriteString("complete -o default -F _perfsim perfsim\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// fishQuote quotes s for fish: single quotes, with \ and ' escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func writeFish(w io.Writer, s completionSpec) error {
	var b strings.Builder
	b.WriteString("# perfsim completion (perfsim completion --help)\n")
	for _, c := range s.commands {
		fmt.Fprintf(&b, "complete -c perfsim -n __fish_use_subcommand -a %s -d %s\n", c, fishQuote(s.summaries[c]))
	}
	for _, c := range s.commands {
		subs, ok := s.subs[c]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "complete -c perfsim -n %s -a %s\n",
			fishQuote(fmt.Sprintf("__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s", c, words(subs))), fishQuote(words(subs)))
	}
	for _, k := range sortedKeys(s.flags) {
		cond := "__fish_seen_subcommand_from " + k
		if c, sub, ok := strings.Cut(k, " "); ok {
			cond = fmt.Sprintf("__fish_seen_subcommand_from %s; and __fish_seen_subcommand_from %s", c, sub)
		}
		for _, f := range s.flags[k] {
			name := strings.TrimPrefix(f, "--")
			switch name {
			case "hw":
				fmt.Fprintf(&b, "complete -c perfsim -n %s -l hw -r -F -a %s\n", fishQuote(cond), fishQuote(words(s.hw)))
			case "model":
				fmt.Fprintf(&b, "complete -c perfsim -n %s -l model -r -F -a %s\n", fishQuote(cond), fishQuote(words(s.models)))
			default:
				fmt.Fprintf(&b, "complete -c perfsim -n %s -l %s\n", fishQuote(cond), name)
			}
		}
	}
	fmt.Fprintf(&b, "complete -c perfsim -n %s -a 'bash zsh fish'\n", fishQuote("__fish_seen_subcommand_from completion"))
	_, err := io.WriteString(w, b.String())
	return err
}
