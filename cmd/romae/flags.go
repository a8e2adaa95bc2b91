package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// running is the flag set of the running command (the CLI runs one
// command per process), for main to print its usage on --help, to tell a
// flag error from a failure, and for `romae help reference` to list every
// command's flags.
var running struct {
	name, synopsis string
	fs             *flag.FlagSet
	badFlags       bool              // parsing failed, or --help was asked for
	aliases        map[string]string // short name → the flag it stands for (--data → --data.train)
	deprecated     map[string]string // old name → its replacement, accepted for one release
	settings       map[string]bool   // flags bound to a config-file field (--train.lr)
}

// newFlagSet makes a command's flag set. Parsing prints nothing: on
// --help main prints the usage to standard output and exits 0; a bad
// flag is one error line with a hint to --help.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { running.badFlags = true } // the flag package calls it on -h and on every parse error
	running.name, running.synopsis, running.fs, running.badFlags = name, synopsis, fs, false
	running.aliases, running.deprecated, running.settings = map[string]string{}, map[string]string{}, map[string]bool{}
	return fs
}

// alias makes --name another spelling of the flag target: the command-line
// vocabulary every command shares (--data, --format, --batch-size,
// --model, --out) for a flag whose full name is a config path.
func alias(fs *flag.FlagSet, name, target string) {
	fs.Var(fs.Lookup(target).Value, name, "same as --"+target)
	running.aliases[name] = target
}

// deprecate keeps the old spelling old of the flag now working for one
// release; using it prints a note to standard error. It is hidden from the
// usage.
func deprecate(fs *flag.FlagSet, old, now string) {
	fs.Var(deprecatedValue{fs.Lookup(now).Value, old, now}, old, "deprecated: use --"+now)
	running.deprecated[old] = now
}

type deprecatedValue struct {
	flag.Value
	old, now string
}

func (d deprecatedValue) Set(s string) error {
	fmt.Fprintf(os.Stderr, "romae %s: --%s is deprecated and will be removed in the next release; use --%s\n", running.name, d.old, d.now)
	return d.Value.Set(s)
}

func (d deprecatedValue) IsBoolFlag() bool {
	b, ok := d.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// canonical is the flag an alias or deprecated name stands for.
func canonical(name string) string {
	if t, ok := running.aliases[name]; ok {
		return t
	}
	if t, ok := running.deprecated[name]; ok {
		return t
	}
	return name
}

// flagDoc is one flag as the usage and the reference show it.
type flagDoc struct {
	names      []string // the flag, then its aliases
	arg, usage string
	def        string
	setting    bool
}

// flagDocs lists the running command's flags, sorted, without deprecated
// spellings, each with its aliases.
func flagDocs() []flagDoc {
	aliasesOf := map[string][]string{}
	for a, t := range running.aliases {
		aliasesOf[t] = append(aliasesOf[t], a)
	}
	var docs []flagDoc
	running.fs.VisitAll(func(f *flag.Flag) {
		if _, dep := running.deprecated[f.Name]; dep {
			return
		}
		if _, al := running.aliases[f.Name]; al {
			return
		}
		arg, usage := flag.UnquoteUsage(f)
		if fv, ok := f.Value.(*fieldValue); ok && arg == "value" {
			arg = fv.typeName()
		}
		d := flagDoc{names: []string{f.Name}, arg: arg, usage: usage, def: f.DefValue, setting: running.settings[f.Name]}
		sort.Strings(aliasesOf[f.Name])
		d.names = append(d.names, aliasesOf[f.Name]...)
		docs = append(docs, d)
	})
	return docs
}

// printUsage writes the running command's synopsis and flags to w.
func printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: romae %s\n\nflags (defaults in parentheses):\n", running.synopsis)
	for _, d := range flagDocs() {
		names := "--" + strings.Join(d.names, ", --")
		if d.arg != "" {
			names += " " + d.arg
		}
		fmt.Fprintf(w, "  %s\n        %s", names, strings.ReplaceAll(d.usage, "\n", "\n        "))
		switch d.def {
		case "", "0", "false", "0,0":
		default:
			fmt.Fprintf(w, " (%s)", d.def)
		}
		fmt.Fprintln(w)
	}
}
