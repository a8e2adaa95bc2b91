// Package nn holds the Transformer's operations as explicit forward/backward
// pairs, llm.c style: every op takes flat row-major buffers whose shapes are
// written next to its signature, writes its outputs into caller-owned memory,
// and never allocates. Backward passes overwrite input gradients and
// accumulate parameter gradients (so a step can sum several micro-batches).
//
// Everything is generic over float32 (training, inference) and float64
// (finite-difference gradient checks).
package nn
