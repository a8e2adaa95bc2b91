#!/usr/bin/env bash
# The scaling model of docs/distributed.md: projected data-parallel
# efficiency of RoMAE pre-training (one rank per node) at 8, 32 and 128
# nodes on 25 and 100 Gb/s networks, for RoMAE-tiny, small and base.
#
#   bash scripts/dist-scaling.sh                         # the documented inputs
#   GFLOPS_PER_CORE=60 CORES=64 BATCH=32 bash scripts/dist-scaling.sh
#
# Inputs (environment, defaults in parentheses):
#   GFLOPS_PER_CORE (90)  sustained fp32 rate of a pre-training step per core:
#                         180 GFLOP/s on 2 Zen 5 cores (docs/performance.md,
#                         RoMAE-tiny pretrain fp32, run 3)
#   CORES (32)            cores per node, one rank per node (GOMAXPROCS=CORES);
#                         thread scaling beyond 2 cores is assumed linear
#   BATCH (64)            samples per node per step (global = BATCH × nodes),
#                         TOKENS (200) tokens each, mask ratio 0.75, 2 values
#   LINK_EFF (0.8)        fraction of the link rate an allreduce achieves
#   ALPHA_US (20)         per-message latency, µs (TCP; RDMA is ~2–5)
# Gradients are float32 (4 bytes per parameter), reduced by a bandwidth-optimal
# allreduce (reduce-scatter + allgather, as Open MPI's large-message
# algorithms): t = 2(N−1)/N · bytes/(LINK_EFF·rate) + 2·log2(N)·ALPHA.
# FLOPs are counted as `romae bench` counts them (cmd/romae/bench.go): the
# encoder sees 1+50 tokens, the tiny-shallow decoder 51+150.
set -euo pipefail
awk -v R="${GFLOPS_PER_CORE:-90}" -v cores="${CORES:-32}" -v b="${BATCH:-64}" -v L="${TOKENS:-200}" \
  -v eff="${LINK_EFF:-0.8}" -v alpha="${ALPHA_US:-20}" '
function stack(d, depth, ffn, n) { return depth * (4*2*n*d*d + 2*2*n*d*ffn + 2*2*n*n*d) }
function params(d, depth, ffn) { return depth * (4*d*d + 2*d*ffn + 2*d) } # model.Size.Params
function log2(x) { return log(x) / log(2) }
BEGIN {
  split("tiny small base", names, " ")
  D["tiny"] = 180; H["tiny"] = 12; F["tiny"] = 720
  D["small"] = 432; H["small"] = 12; F["small"] = 1728
  D["base"] = 720; H["base"] = 12; F["base"] = 2880
  dd = 180; ddepth = 2; dffn = 720; vals = 2
  masked = int(0.75 * L + 0.5); Le = 1 + L - masked; Lq = masked
  printf "inputs: %g GFLOP/s/core × %d cores per node, %d samples × %d tokens per node, link efficiency %g, latency %g µs\n", R, cores, b, L, eff, alpha
  printf "%-6s %9s %9s %9s %5s %8s %9s %9s %9s %9s\n", "model", "params", "GFLOP/smp", "compute", "nodes", "Gb/s", "allreduce", "fp32", "bf16", "bf16+ovl"
  for (i = 1; i <= 3; i++) {
    m = names[i]; d = D[m]
    fwd = 2*Le*vals*d + stack(d, H[m], F[m], Le) + 2*Le*d*dd + stack(dd, ddepth, dffn, Le + Lq) + 2*Lq*dd*vals
    flop = 3 * fwd                      # per sample
    P = params(d, H[m], F[m]) + params(dd, ddepth, dffn)
    tc = b * flop / (R * 1e9 * cores)   # seconds of compute per step
    split("8 32 128", Ns, " "); split("25 100", Bs, " ")
    for (j = 1; j <= 3; j++) for (k = 1; k <= 2; k++) {
      N = Ns[j]; bw = Bs[k] * 1e9 / 8 * eff
      t32 = 2*(N-1)/N * 4*P / bw + 2*log2(N) * alpha * 1e-6
      t16 = 2*(N-1)/N * 2*P / bw + 2*log2(N) * alpha * 1e-6
      # Overlap: buckets reduced while backward (2/3 of the step) runs; the
      # last bucket (the first layers, ~1/12 of the gradient) stays exposed.
      exposed = t16 - 2/3 * tc; if (exposed < t16 / 12) exposed = t16 / 12
      printf "%-6s %8.1fM %9.1f %7.0fms %5d %8d %7.1fms %8.0f%% %8.0f%% %8.0f%%\n", m, P/1e6, flop/1e9, 1000*tc, N, Bs[k], 1000*t32,
        100*tc/(tc+t32), 100*tc/(tc+t16), 100*tc/(tc+exposed)
    }
  }
}'
