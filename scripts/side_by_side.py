#!/usr/bin/python3
"""Side-by-side timing: the authors' PyTorch RoMAE (the anchor in
../shared/anchors) and `romae bench`, alternating in one run, with ratios.

    apt-get install -y python3-torch python3-numpy libopenblas0-pthread
    /usr/bin/python3 scripts/side_by_side.py [--rounds 2] [--steps 5] [--out FILE]
        [--batch 32] [--workloads pretrain,finetune,infer] [--isa avx2]

Each round runs the anchor (pre-training step, fine-tuning step, inference:
RoMAE-tiny, batch 32, 200 tokens, 2-D positions, continuous RoPE) and then
romae on the same workloads in fp32 and bf16 (the order flips every round),
each in its own process. Per workload it prints both medians (wall seconds
per step, after warm-up) and the ratio anchor/romae of that round, and the
per-step CPU seconds of both: on a shared box wall time measures the other
processes too, so compare within a round and look at the CPU column. The
CPU model and the load average are printed with the table. Raw JSON lines
go to --out.
"""
import argparse, json, os, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANCHORS = os.path.join(ROOT, "..", "shared", "anchors")
NAMES = {"pretrain_step": "pretrain", "finetune_step": "finetune", "inference": "infer"}


def anchor_main(steps, batch, workloads):
    """Runs inside the anchor's process: time its workloads, wall and CPU."""
    os.environ.setdefault("ROMAE_OFFICIAL", os.path.join(ANCHORS, "authors-romae"))
    sys.path.insert(0, ANCHORS)
    import torch_official_bench as tb  # sets torch's thread count on import
    fns, _ = tb.workloads(batch, 200, 2, 2, 0.75, "RoMAE-tiny", "ropend")
    for name, fn in fns.items():
        if NAMES[name] not in workloads:
            continue
        for _ in range(2):
            fn()
        wall, cpu = [], []
        for _ in range(steps):
            t, c = time.perf_counter(), time.process_time()
            fn()
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        print(json.dumps({"impl": "authors-pytorch", "torch": tb.torch.__version__, "workload": NAMES[name],
                          "threads": tb.threads, "batch": batch, "median_s": statistics.median(wall),
                          "cpu_median_s": statistics.median(cpu)}), flush=True)


def cpu_name():
    with open("/proc/cpuinfo") as f:
        info = {k.strip(): v.strip() for k, v in (l.split(":", 1) for l in f.read().split("\n\n")[0].splitlines() if ":" in l)}
    return "%s (family %s, model %s)" % (info["model name"], info["cpu family"], info["model"])


def bf16_refused(romae, env):
    """Why romae refuses bf16 products here (no AVX512_BF16 or AMX, or
    --isa avx2), or "" when it runs them: a one-step bench says."""
    r = subprocess.run([romae, "bench", "--workload", "infer", "--precision", "bf16", "--batch-size", "1",
                        "--tokens", "2", "--steps", "1", "--warmup", "0"], capture_output=True, text=True, env=env)
    return "" if r.returncode == 0 else (r.stderr.strip() or "exit status %d" % r.returncode)


def run_json(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2, help="threads for both (GOMAXPROCS, torch threads)")
    ap.add_argument("--precision", default="",
                    help="romae's precisions (default fp32,bf16, or fp32 alone where romae refuses bf16: "
                         "a CPU without AVX512_BF16 or AMX, and --isa avx2)")
    ap.add_argument("--batch", type=int, default=32, help="samples per step for both (1: a service's latency)")
    ap.add_argument("--workloads", default="pretrain,finetune,infer")
    ap.add_argument("--isa", choices=["native", "avx2"], default="native",
                    help="avx2: both sides restricted to AVX2+FMA on an AVX-512 machine, a stand-in for "
                         "CPUs without AVX-512 (romae: GODEBUG=cpu.avx512f=off; PyTorch: ATEN_CPU_CAPABILITY=avx2, "
                         "OPENBLAS_CORETYPE=Haswell, DNNL_MAX_CPU_ISA=AVX2)")
    ap.add_argument("--romae", default="", help="romae binary (default: build one into a temporary file)")
    ap.add_argument("--out", default="", help="append the raw JSON lines here")
    ap.add_argument("--anchor-only", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.anchor_only:
        anchor_main(a.steps, a.batch, a.workloads.split(","))
        return
    workloads = a.workloads.split(",")
    if a.batch < 1 or not workloads or any(w not in NAMES.values() for w in workloads):
        sys.exit("--batch must be >= 1 and --workloads a list of pretrain, finetune, infer")
    if subprocess.run(["dpkg", "-s", "libopenblas0-pthread"], capture_output=True).returncode != 0:
        sys.exit("libopenblas0-pthread is not installed: torch would use the reference BLAS (~7x slower); "
                 "apt-get install -y python3-torch python3-numpy libopenblas0-pthread")
    romae = a.romae
    if not romae:
        romae = "/tmp/romae-side-by-side"
        subprocess.run(["go", "build", "-o", romae, "./cmd/romae"], cwd=ROOT, check=True,
                       env=dict(os.environ, GOEXPERIMENT="simd"))
    env = dict(os.environ, THREADS=str(a.threads), GOMAXPROCS=str(a.threads))
    if a.isa == "avx2":
        env.update(GODEBUG="cpu.avx512f=off", ATEN_CPU_CAPABILITY="avx2", OPENBLAS_CORETYPE="Haswell",
                   DNNL_MAX_CPU_ISA="AVX2")
    refused = bf16_refused(romae, env)
    if not a.precision:
        a.precision = "fp32,bf16" if not refused else "fp32"
    elif refused and "bf16" in a.precision.split(","):
        sys.exit("--precision bf16: " + refused)
    cpu = cpu_name()
    print("CPU: %s; instruction set: %s; %d threads each; batch %d; load average at start %s" % (
        cpu, a.isa, a.threads, a.batch, os.getloadavg()[0]), flush=True)
    # What romae chose here: back ends, bf16 kernel, CPU class and the cache
    # sizes its blocking uses (ROMAE_CACHES, if set, is named there).
    version = subprocess.run([romae, "version"], capture_output=True, text=True, env=env).stdout
    print("romae " + next((l for l in version.splitlines() if l.startswith("gemm back ends:")), "version: ?"), flush=True)
    if refused:
        print("romae in fp32 only: " + refused, flush=True)
    rows = []  # (round, workload, precision, anchor, romae)
    out = open(a.out, "a") if a.out else None
    for r in range(a.rounds):
        res = {}
        order = ["anchor", "romae"] if r % 2 == 0 else ["romae", "anchor"]
        for who in order:
            if who == "anchor":
                lines = run_json(["/usr/bin/python3", os.path.abspath(__file__), "--anchor-only",
                                  "--steps", str(a.steps), "--batch", str(a.batch), "--workloads", a.workloads], env)
            else:
                lines = run_json([romae, "bench", "--workload", a.workloads, "--precision", a.precision,
                                  "--batch-size", str(a.batch), "--steps", str(a.steps), "--warmup", "2",
                                  "--json"], env)
            for l in lines:
                l["round"], l["cpu_model"] = r + 1, cpu
                res[(who, l["workload"], l.get("precision", ""))] = l
                if out:
                    out.write(json.dumps(l) + "\n")
        for w in workloads:
            an = res[("anchor", w, "")]
            for p in a.precision.split(","):
                ro = res[("romae", w, p)]
                rows.append((r + 1, w, p, an, ro))
    print("load average at end %s" % os.getloadavg()[0])
    print("\n| round | workload | precision | PyTorch s (CPU s) | romae s (CPU s) | ratio wall | ratio CPU | romae kernel |")
    print("|---|---|---|---|---|---|---|---|")
    for r, w, p, an, ro in rows:
        print("| %d | %s | %s | %.3f (%.2f) | %.3f (%.2f) | %.2f | %.2f | %s |" % (
            r, w, p, an["median_s"], an["cpu_median_s"], ro["median_s"], ro["cpu_median_s"],
            an["median_s"] / ro["median_s"], an["cpu_median_s"] / ro["cpu_median_s"], ro.get("kernel", "")))


if __name__ == "__main__":
    main()
