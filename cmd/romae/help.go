package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

func init() {
	commands["help"] = command{"a command's flags (romae help COMMAND), or every command's as Markdown (romae help reference)", cmdHelp}
}

func cmdHelp(_ context.Context, args []string) error {
	switch {
	case len(args) == 0:
		usage(os.Stdout)
		return nil
	case len(args) == 1 && args[0] == "reference":
		cmds, settings, err := reference()
		if err != nil {
			return err
		}
		fmt.Print(cmds, "\n", settings)
		return nil
	case len(args) == 1:
		if _, ok := commands[args[0]]; !ok || args[0] == "help" {
			return fmt.Errorf("unknown command %q (romae help lists them)", args[0])
		}
		if _, err := commandFlags(args[0]); err != nil {
			return err
		}
		printUsage(os.Stdout)
		return nil
	}
	return fmt.Errorf("want at most one command name, got %q", args)
}

// commandFlags runs a command with --help, which every command answers by
// returning flag.ErrHelp after declaring its flags, and returns them: the
// reference below is generated from the code that parses the flags.
func commandFlags(name string) ([]flagDoc, error) {
	running.fs = nil
	err := commands[name].run(context.Background(), []string{"--help"})
	if !errors.Is(err, flag.ErrHelp) || running.fs == nil {
		return nil, fmt.Errorf("romae %s --help did not list its flags (%v)", name, err)
	}
	return flagDocs(), nil
}

// reference is the Markdown the README (cmds) and docs/cli.md (settings)
// carry: every command with its flags, and every training setting with its
// default and meaning. Tests keep both files in sync with it.
func reference() (cmds, settings string, err error) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		if n != "help" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var c, s strings.Builder
	c.WriteString("| command | what it does | flags |\n|---|---|---|\n")
	var settingDocs []flagDoc
	for _, n := range names {
		docs, err := commandFlags(n)
		if err != nil {
			return "", "", err
		}
		var flags []string
		hasSettings := false
		for _, d := range docs {
			if d.setting {
				hasSettings = true
				if n == "pretrain" { // pretrain and finetune share them
					settingDocs = append(settingDocs, d)
				}
				if len(d.names) == 1 {
					continue
				}
			}
			flags = append(flags, markdownNames(d))
		}
		if hasSettings {
			flags = append(flags, "every setting below (`--model.*`, `--train.*`, `--data.*`)")
		}
		fmt.Fprintf(&c, "| `%s` | %s | %s |\n", n, cell(commands[n].summary), cmp.Or(strings.Join(flags, ", "), "—"))
	}
	c.WriteString("\n| settings of `pretrain` and `finetune` | flags (`--section.name`; every one is also a config-file field) |\n|---|---|\n")
	groups := map[string][]string{}
	var order []string
	for _, d := range settingDocs {
		section, name, _ := strings.Cut(d.names[0], ".")
		if groups[section] == nil {
			order = append(order, section)
		}
		groups[section] = append(groups[section], name)
	}
	for _, g := range order {
		fmt.Fprintf(&c, "| `%s` | %s |\n", g, strings.Join(groups[g], ", "))
	}

	s.WriteString("| setting | default | meaning |\n|---|---|---|\n")
	for _, d := range settingDocs {
		fmt.Fprintf(&s, "| %s | %s | %s |\n", markdownNames(d), cmp.Or(cell(d.def), "—"), cell(d.usage))
	}
	return c.String(), s.String(), nil
}

// markdownNames is `--name` (`--alias`, ...).
func markdownNames(d flagDoc) string {
	out := "`--" + d.names[0] + "`"
	if len(d.names) > 1 {
		out += " (`--" + strings.Join(d.names[1:], "`, `--") + "`)"
	}
	return out
}

// cell escapes text for a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
