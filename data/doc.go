// Package data turns time series, light curves, images and arrays into the one
// shape RoMAE consumes: a sample is a set of N tokens, each carrying C values
// (a flattened patch, or one observation's measurements) and a real-valued
// position of D coordinates. Because RoPE is the model's only source of
// position, nothing here assumes regular sampling: irregular times, dropped
// steps and per-channel tokens are all just different position vectors.
//
// Loaders read UEA/UCR .ts files (LoadTS), long-format CSV light curves
// (LoadLongCSV, LoadLabelsCSV, AttachLabels), and NumPy .npy/.npz arrays
// (LoadNPY, LoadNPZ, then DenseSeries or DenseImages). They report problems
// as "file:line: ..." errors (file: field for binary formats) instead of
// panicking, and never pass NaN or Inf on silently: a missing value is either
// handled by a documented rule or rejected.
//
// Regular grids become tokens with Patchify (and back with Unpatchify) in
// the authors' patch order. ComputeStats/Stats.Apply normalise value slots,
// Split and Subset make (stratified) train/validation/test parts, and
// DropRandomSteps implements the paper's random step dropping.
//
// Collate and RandomMask build the padded model input for one mini-batch and
// reuse their buffers, so a training loop allocates nothing per step.
//
// Functions that take a Dataset other than Validate assume it is valid;
// loaders return valid datasets, and hand-built ones should be checked once
// with Validate.
package data
