// Command romae trains and runs Rotary Masked Autoencoders: pre-training on
// unlabelled (irregular) data, fine-tuning, evaluation, prediction,
// interpolation and embedding, on .ts, long-format CSV and NumPy files.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"romae/ckpt"
	"romae/train"
)

type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
}

var commands = map[string]command{
	"version":         {"version, commit, Go version and matrix-multiply back ends", cmdVersion},
	"pretrain":        {"pre-train a masked autoencoder on unlabelled data", cmdPretrain},
	"finetune":        {"train a classifier/regressor, from a pre-trained checkpoint (--model) or from scratch", cmdFinetune},
	"evaluate":        {"metrics of a checkpoint on a data file (JSON)", cmdEvaluate},
	"predict":         {"predictions (labels and probabilities, or targets) as CSV or JSON", cmdPredict},
	"interpolate":     {"values at requested times/positions for each series (CSV)", cmdInterpolate},
	"embed":           {"[CLS] or mean embeddings to .npy", cmdEmbed},
	"inspect":         {"a checkpoint's config, sizes and training state (JSON)", cmdInspect},
	"sizes":           {"the model sizes of the paper's Table 8", cmdSizes},
	"serve":           {"an HTTP inference server for a trained model (JSON API, micro-batching; docs/serving.md)", cmdServe},
	"verify-official": {"compare with the authors' PyTorch outputs on a parity fixture", cmdVerifyOfficial},
	"recsys-train":    {"train a causal event-sequence recommender (ranking or next item; positional variants incl. SIREN-RoPE)", cmdRecsysTrain},
	"recsys-evaluate": {"metrics of a recsys checkpoint on an events file (JSON: NE, AUC or HR@10, NDCG@10)", cmdRecsysEvaluate},
	"recsys-score":    {"score an events file with a recsys checkpoint: outcome probabilities or top-K next items (CSV)", cmdRecsysScore},
}

// stopsCleanly are the commands that watch for Ctrl-C and SIGTERM
// themselves (their context), to checkpoint or drain before exiting.
var stopsCleanly = map[string]bool{"pretrain": true, "finetune": true, "experiment": true, "recsys-train": true, "serve": true}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: romae <command> [flags]   (romae <command> --help or romae help <command> for its flags)\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-16s %s\n", n, commands[n].summary)
	}
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "-h", "--help":
		usage(os.Stdout)
		return
	case "--version", "-version":
		os.Args[1] = "version"
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "romae: unknown command %q (romae --help lists them)\n", os.Args[1])
		os.Exit(2)
	}
	// Ctrl-C stops training cleanly: the trainer writes last.safetensors
	// before returning, so the run can be resumed; serve drains its
	// requests. Every other command has nothing to save: it stops at once,
	// leaving no temporary file beside its output.
	ctx := context.Background()
	if stopsCleanly[os.Args[1]] {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	} else {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-sig
			ckpt.RemoveInFlight()
			fmt.Fprintf(os.Stderr, "romae %s: interrupted\n", os.Args[1])
			os.Exit(130)
		}()
	}
	err := cmd.run(ctx, os.Args[2:])
	var interrupted *train.Interrupted
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp) && running.fs != nil:
		printUsage(os.Stdout)
	case running.badFlags:
		fmt.Fprintf(os.Stderr, "romae %s: %v (romae %s --help lists the flags)\n", os.Args[1], err, os.Args[1])
		os.Exit(2)
	case errors.As(err, &interrupted):
		fmt.Fprintf(os.Stderr, "romae %s: %v\nresume with: %s\n", os.Args[1], err, resumeCommand(os.Args))
		os.Exit(130) // the shell's code for a command ended by SIGINT
	default:
		fmt.Fprintf(os.Stderr, "romae %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// resumeCommand is the command line that continues an interrupted training
// run: the same one, with --train.resume and without --overwrite (which
// would delete the checkpoint to resume from).
func resumeCommand(args []string) string {
	var words []string
	resume := false
	for _, a := range args {
		switch strings.TrimLeft(a, "-") {
		case "overwrite", "overwrite=true":
			continue
		case "train.resume", "train.resume=true":
			resume = true
		}
		words = append(words, shellQuote(a))
	}
	if !resume {
		words = append(words, "--train.resume")
	}
	return strings.Join(words, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
