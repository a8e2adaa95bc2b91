//go:build mpi

package main

// End-to-end tests of data-parallel training under Open MPI's mpirun:
// `go test -tags mpi -run '^TestMPI' ./cmd/romae/` (scripts/test.sh runs
// them where mpirun is installed). They build the MPI-enabled binary and
// launch 2 ranks on this machine (oversubscribed, so one core will do).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"romae/model"
	"romae/train"
)

// mpiLossTolerance bounds |Δloss|/loss at every logged step between the
// 2-rank run and the one-process run with the same global batch: they
// differ only in float32 summation order (measured: 1.7e-6 over these 40
// steps on an AMD EPYC Zen 4; train.TestDataParallelMatchesOneProcess
// holds the same bound in process).
const mpiLossTolerance = 1e-5

type mpiRig struct {
	t        *testing.T
	bin      string // romae built with -tags mpi
	marker   string // tags this test's rank processes
	mpirun   string
	baseArgs []string
}

func newMPIRig(t *testing.T) *mpiRig {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not installed (apt-get install openmpi-bin libopenmpi-dev)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "romae-mpi")
	if out, err := exec.Command("go", "build", "-tags", "mpi", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi: %v\n%s", err, out)
	}
	return &mpiRig{t: t, bin: bin, marker: dir, mpirun: mpirun, baseArgs: []string{
		"pretrain", "--data.train", trainTS,
		"--model.size", "36,2,2,72", "--model.decoder_size", "24,2,1,48",
		// No dropout: with it, rank 1 draws its own masks and the curves
		// differ by more than rounding.
		"--model.hidden_dropout", "0", "--model.attn_dropout", "0", "--model.drop_path", "0",
		"--train.batch_size", "8", "--train.progress", "none",
	}}
}

// command returns the one-process command (ranks 0) or mpirun with ranks.
func (r *mpiRig) command(ranks int, args ...string) *exec.Cmd {
	args = append(append([]string{}, r.baseArgs...), args...)
	var cmd *exec.Cmd
	if ranks == 0 {
		cmd = exec.Command(r.bin, args...)
	} else {
		cmd = exec.Command(r.mpirun, append([]string{"-np", strconv.Itoa(ranks), "--oversubscribe",
			// Containers often forbid the cross-process memory access
			// (CMA) Open MPI's shared-memory transport tries first.
			"--mca", "btl_vader_single_copy_mechanism", "none",
			"-x", "ROMAE_TEST_MARKER", r.bin}, args...)...)
	}
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "ROMAE_TEST_MARKER="+r.marker,
		"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	return cmd
}

func (r *mpiRig) run(ranks int, args ...string) string {
	r.t.Helper()
	cmd := r.command(ranks, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		r.t.Fatalf("%v: %v\n%s", cmd.Args, err, out.String())
	}
	return out.String()
}

// rankPID finds the process of rank in this test's job (0 if none).
func (r *mpiRig) rankPID(rank int) int {
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		env, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		vars := strings.Split(string(env), "\x00")
		has := func(kv string) bool {
			for _, v := range vars {
				if v == kv {
					return true
				}
			}
			return false
		}
		if has("ROMAE_TEST_MARKER="+r.marker) && has("OMPI_COMM_WORLD_RANK="+strconv.Itoa(rank)) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return pid
		}
	}
	return 0
}

func stepLosses(t *testing.T, dir string) []float64 {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, train.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var rec struct{ Loss *float64 }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		if rec.Loss != nil {
			out = append(out, *rec.Loss)
		}
	}
	return out
}

func loadWeights(t *testing.T, dir string) []float32 {
	t.Helper()
	m, _, err := model.Load[float32](filepath.Join(dir, train.LastFile))
	if err != nil {
		t.Fatal(err)
	}
	return m.W
}

func TestMPI(t *testing.T) {
	r := newMPIRig(t)

	// (a) The loss curve of `mpirun -np 2` follows the one-process run with
	// the same global batch (8 samples, 4 per rank), step by step.
	t.Run("loss curve matches one process", func(t *testing.T) {
		one, two := t.TempDir(), t.TempDir()
		r.run(0, "--train.epochs", "10", "--train.out", one)
		out := r.run(2, "--train.epochs", "10", "--train.out", two)
		if !strings.Contains(out, "data parallel: 2 ranks, global batch 8") {
			t.Errorf("the 2-rank run did not report its ranks:\n%s", out)
		}
		want, got := stepLosses(t, one), stepLosses(t, two)
		if len(got) != len(want) || len(want) < 40 {
			t.Fatalf("%d logged steps under mpirun, %d in one process", len(got), len(want))
		}
		worst := 0.0
		for i := range want {
			worst = math.Max(worst, math.Abs(got[i]-want[i])/want[i])
		}
		t.Logf("largest relative loss difference over %d steps: %.2g", len(want), worst)
		if worst > mpiLossTolerance {
			t.Errorf("losses under mpirun %v\none process %v\n(tolerance %g)", got, want, mpiLossTolerance)
		}
		var res train.Result
		if b, err := os.ReadFile(filepath.Join(two, "result.json")); err != nil || json.Unmarshal(b, &res) != nil || res.Ranks != 2 {
			t.Errorf("result.json of the 2-rank run: %+v, %v", res, err)
		}
	})

	// (b) A rank killed mid-run stops the whole job with mpirun's message
	// naming it, instead of leaving rank 0 waiting in an allreduce; the
	// run resumed with 2 ranks ends with the weights of an uninterrupted
	// 2-rank run, bit for bit.
	t.Run("killed rank stops the job; resume is exact", func(t *testing.T) {
		const epochs = 40 // 4 steps each, a checkpoint after every step
		long := []string{"--train.epochs", strconv.Itoa(epochs), "--train.checkpoint_every", "1"}
		whole := t.TempDir()
		r.run(2, append(long, "--train.out", whole)...)

		dir := t.TempDir()
		cmd := r.command(2, append(long, "--train.out", dir)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		deadline := time.Now().Add(60 * time.Second)
		for {
			if b, err := os.ReadFile(filepath.Join(dir, train.MetricsFile)); err == nil && bytes.Count(b, []byte("\n")) >= 20 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("no progress under mpirun:\n%s", out.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
		pid0, pid1 := r.rankPID(0), r.rankPID(1)
		if pid0 == 0 || pid1 == 0 {
			cmd.Process.Kill()
			t.Fatalf("rank processes not found (rank 0 pid %d, rank 1 pid %d)", pid0, pid1)
		}
		killed := time.Now()
		syscall.Kill(pid1, syscall.SIGKILL)
		select {
		case err := <-exited:
			t.Logf("mpirun exited %v after rank 1 was killed (%v)", time.Since(killed).Round(time.Millisecond), err)
			if err == nil {
				t.Errorf("mpirun exited 0 after a rank died")
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("mpirun still running 30 s after rank 1 died: the job hangs\n%s", out.String())
		}
		if !strings.Contains(out.String(), "rank 1") || !strings.Contains(out.String(), "signal 9") {
			t.Errorf("mpirun's message does not name the dead rank and its signal:\n%s", out.String())
		}
		if alive(pid0) {
			t.Errorf("rank 0 (pid %d) outlived the job", pid0)
		}

		_, ck, err := model.Load[float32](filepath.Join(dir, train.LastFile))
		if err != nil {
			t.Fatal(err)
		}
		var st struct{ Step, Ranks int }
		json.Unmarshal([]byte(ck.Meta["romae.train_state"]), &st)
		if st.Step >= 4*epochs || st.Ranks != 2 {
			t.Fatalf("checkpoint at step %d of %d, ranks %d: the kill did not land mid-run", st.Step, 4*epochs, st.Ranks)
		}
		t.Logf("killed after checkpointing step %d of %d", st.Step, 4*epochs)

		resumed := r.run(2, append(long, "--train.out", dir, "--train.resume")...)
		if !strings.Contains(resumed, fmt.Sprintf("resuming %s at step %d", filepath.Join(dir, train.LastFile), st.Step)) {
			t.Errorf("the resumed run did not report its checkpoint:\n%s", resumed)
		}
		a, b := loadWeights(t, whole), loadWeights(t, dir)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("weight %d: %v after kill and resume, %v uninterrupted", i, b[i], a[i])
			}
		}
	})
}

// The default build, launched as 2 ranks, refuses instead of running two
// independent trainings into one directory.
func TestMPIDefaultBuildRefuses(t *testing.T) {
	r := newMPIRig(t)
	r.bin = filepath.Join(t.TempDir(), "romae")
	if out, err := exec.Command("go", "build", "-o", r.bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	cmd := r.command(2, "--train.epochs", "1", "--train.out", dir)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "built without MPI") || !strings.Contains(string(out), "romae-mpi") {
		t.Errorf("mpirun -np 2 of the default build: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, train.LastFile)); err == nil {
		t.Errorf("the refused run wrote a checkpoint")
	}
}

// alive reports whether pid runs (a zombie, dead but not yet reaped, does not).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state …: comm may hold spaces and parentheses.
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	return len(rest) > 1 && rest[1] != 'Z'
}

// The launch examples use flags the binary has, and the MPIJob starts one
// rank per worker. `romae version` names the MPI library.
func TestMPIExamples(t *testing.T) {
	r := newMPIRig(t)
	if out, err := exec.Command(r.bin, "version").Output(); err != nil || !strings.Contains(string(out), "mpi: Open MPI v") {
		t.Errorf("romae version of the MPI build: %v\n%s", err, out)
	}
	help, _ := exec.Command(r.bin, "pretrain", "--help").CombinedOutput()
	for _, f := range []string{"slurm.sbatch", "mpijob.yaml"} {
		raw, err := os.ReadFile(filepath.Join("../../examples/distributed", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, flag := range regexp.MustCompile(`--(?:model|train|data)\.[a-z_]+`).FindAllString(string(raw), -1) {
			if !regexp.MustCompile(`-` + regexp.QuoteMeta(flag[2:]) + `\b`).Match(help) {
				t.Errorf("%s uses %s, which `romae pretrain --help` does not list", f, flag)
			}
		}
	}
	var job struct {
		Spec struct {
			SlotsPerWorker  int `yaml:"slotsPerWorker"`
			MPIReplicaSpecs map[string]struct {
				Replicas int
				Template struct {
					Spec struct{ Containers []struct{ Command []string } }
				}
			} `yaml:"mpiReplicaSpecs"`
		}
	}
	raw, _ := os.ReadFile("../../examples/distributed/mpijob.yaml")
	if err := yaml.Unmarshal(raw, &job); err != nil {
		t.Fatal(err)
	}
	cmd := job.Spec.MPIReplicaSpecs["Launcher"].Template.Spec.Containers[0].Command
	workers := job.Spec.MPIReplicaSpecs["Worker"].Replicas * job.Spec.SlotsPerWorker
	if len(cmd) < 3 || cmd[0] != "mpirun" || cmd[1] != "-np" || cmd[2] != strconv.Itoa(workers) || !slices.Contains(cmd, "bin/romae-mpi") {
		t.Errorf("launcher command %v: want mpirun -np %d … bin/romae-mpi", cmd, workers)
	}
}
