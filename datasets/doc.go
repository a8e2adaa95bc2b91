// Package datasets builds the data behind the RoMAE paper's experiments
// (arXiv 2505.20535) as ready-to-train *data.Dataset values: deterministic
// generators for every synthetic task, and a reader for the real images that
// Debian ships. Nothing is downloaded at run time.
//
// Generators (each cites the section it reproduces):
//
//   - Position: absolute position reconstruction (Sec. 5.1, App. B.1).
//   - Synthetic: HeTVAE's univariate interpolation benchmark (Sec. 5.5, Table 7).
//   - Spiral: ContiFormer-style Archimedean spirals (Sec. 5.5, Table 7).
//   - Pendulum: the CRU/S5 pendulum angle regression (Table 5).
//   - Sines: noisy sines of 1 or 2 integer frequencies (App. B.4).
//   - LightCurves: an irregular multi-band light-curve classification
//     benchmark (ELAsTiCC-like layout, for the SIREN-RoPE experiments).
//
// ObserveRandom and ObserveFixed split any dataset into observed and hidden
// tokens for interpolation tasks; ScalePositions rescales position axes.
//
// Real data: ReadIDX parses IDX files (plain or gzipped), LoadFashionMNIST
// reads Debian's dataset-fashion-mnist package (FashionMNISTDir), and Images
// turns images into patch tokens with 2-D grid positions.
//
// # Determinism
//
// Every generator takes a seed and draws from math/rand/v2's PCG. Each sample
// has its own stream, derived from (seed, generator name, sample index), so
// the same seed always gives the same data, the first k samples of
// Gen(n, seed) equal Gen(k, seed) for every k <= n, generators given the same
// seed are not correlated with one another, and the expensive generators can
// run on all cores without changing a bit of their output.
//
// Generators panic on invalid arguments (n < 1 and the like), which are
// caller bugs; readers of files return errors that name the file.
package datasets
