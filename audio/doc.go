// Package audio turns sound clips into RoMAE token datasets: the stand-in for
// the paper's ESC-50 / Speech Commands experiments (Table 3).
//
// The pipeline is the one AST/SSAST use:
//
//	WAV file ──ReadWAV──▶ Clip ──Resample──▶ 16 kHz ──Fbank──▶ Kaldi log-mel [frames×128]
//	  ──pad/cut to TargetFrames──▶ Normalize ──Patches──▶ 16×16 tokens with 2-D positions
//
// and SpeechCommandsDataset runs it over a list of labelled clips to build a
// data.Dataset with C = 256 values per token and D = 2 position axes
// (time-patch index, frequency-patch index).
//
// Clips come from WAV files (ReadWAV/LoadWAV: PCM 8/16/24/32-bit, IEEE float
// 32/64-bit, WAVE_FORMAT_EXTENSIBLE, any channel count, any rate), from the
// espeak-ng speech synthesiser (SpeakWords; Debian package espeak-ng), or from
// the pure-Go generator Tones, which needs nothing outside the module.
//
// Fbank reproduces Kaldi's compute-fbank-feats (equivalently
// torchaudio.compliance.kaldi.fbank) for its default options; the formulas
// are written out next to the code in fbank.go.
package audio
