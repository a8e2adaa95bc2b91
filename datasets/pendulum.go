package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"

	"romae/data"
)

// PendulumSize is the side of the square pendulum images.
const PendulumSize = 24

// PendulumConfig parameterises the pendulum generator; DefaultPendulumConfig
// is the CRU regression setting used by the paper. Changing it is meant for
// tests and ablations.
type PendulumConfig struct {
	Frames          int     // frames simulated per sequence (100)
	Keep            int     // frames kept per sample, chosen at random (50); Keep == Frames keeps all
	Dt              float64 // seconds between frames (0.01)
	SimDt           float64 // internal integration step in seconds (1e-4)
	Friction        float64 // viscous friction coefficient on the angular velocity (0.1)
	TransitionNoise float64 // std of the N(0, σ²) kick added to the angular velocity after each frame (0.1)
	ImageNoise      bool    // add CRU's temporally correlated image noise (true)
	CleanFrames     int     // leading frames left noise-free (5)
	Ball            bool    // draw a ball at the tip instead of CRU's rod (false)
}

// DefaultPendulumConfig returns the paper's setting (Table 5; CRU's
// generate_pendulums(task="regression")).
func DefaultPendulumConfig() PendulumConfig {
	return PendulumConfig{
		Frames: 100, Keep: 50, Dt: 0.01, SimDt: 1e-4,
		Friction: 0.1, TransitionNoise: 0.1, ImageNoise: true, CleanFrames: 5,
	}
}

// Pendulum builds the pendulum angle regression task of Table 5 with the
// default configuration; see PendulumWith. The paper uses 2000 training,
// 1000 validation and 1000 test samples: generate them with distinct seeds
// (or one call of n = 4000 and data.Split).
func Pendulum(n int, seed uint64) *data.Dataset {
	ds, err := PendulumWith(n, seed, DefaultPendulumConfig())
	if err != nil {
		panic("datasets.Pendulum: " + err.Error())
	}
	return ds
}

// PendulumWith reimplements the CRU/S5 pendulum generator (CRU's
// lib/pendulum_generation.py, itself RKN's) from its physics:
//
// Dynamics. A rod pendulum of mass m = 1, length l = 1, inertia I = m l²/3,
// g = 9.81, in CRU's simulator angle θ (θ = 0 upright): θ” = c sin θ − μ θ'
// with c = g l m / I = 3g and friction μ = cfg.Friction. Each sequence starts
// at rest with θ ~ U(0, 2π). Between frames the state advances by Dt with
// Dt/SimDt semi-implicit Euler steps (ω += SimDt(c sin θ − μ ω); θ += SimDt ω),
// then ω receives a transition-noise kick N(0, TransitionNoise²) and θ is
// wrapped to [0, 2π). The reported angle is φ = θ − π (φ = 0 hangs down),
// and the per-frame target is (sin φ, cos φ) of the true state (TargetDim 2,
// per token). The energy E = ω²/2 + c cos θ obeys dE/dt = −μ ω² ≤ 0 without
// noise.
//
// Rendering. CRU draws, on a 128×128 canvas, a line of width 8 from the pivot
// (64, 64) to the tip (64 + 55 sin φ, 64 + 55 cos φ) (x = column, y = row,
// downwards) and downsamples it to 24×24 with PIL's antialiasing filter. We
// rasterise the same rod directly at 24×24 in the same coordinates scaled by
// 24/128, with a box-filter coverage estimate (coverage across the rod ×
// coverage along it, each clamp(distance-to-edge + ½, 0, 1)), giving values
// in [0, 1] instead of CRU's uint8 0..255. With cfg.Ball a disc of radius 8
// at length 50 is drawn instead (CRU's "ball" mode; the regression task uses
// the rod). CRU's 1e-5 observation noise on the drawn state is negligible and
// omitted.
//
// Image noise (CRU's add_img_noise with r = 0.2, t_ll = 0, t_lu = 0.25,
// t_ul = 0.75, t_uu = 1). Per sequence a factor follows a clipped random
// walk over the frames, f_0 ~ U(0, 1), f_{k+1} = clip(f_k + U(−0.2, 0.2),
// 0, 1); with t1 ~ U(0, 0.25) and t2 ~ U(0.75, 1) it is stretched to
// f = clip((f − t1)/(t2 − t1), 0, 1), and the first CleanFrames frames get
// f = 1. Each pixel becomes f·pixel + (1 − f)·u with fresh u ~ U(0, 1): the
// noise level is temporally correlated, from clean frames to pure noise.
//
// Sampling. Keep of the Frames frames are kept, a uniform random subset
// sorted in time (the irregular sampling of the paper: 50 of 100). Each kept
// frame is one token of C = 576 values — the whole image, patch (1, 24, 24),
// row-major — at the 1-D position of its frame index k (0..99, CRU's t/dt).
// The ID is "pendulum-000042". Sample i depends only on (seed, i); samples
// are generated on all cores.
func PendulumWith(n int, seed uint64, cfg PendulumConfig) (*data.Dataset, error) {
	if n < 1 {
		return nil, fmt.Errorf("PendulumWith: n = %d, want >= 1", n)
	}
	if cfg.Frames < 1 || cfg.Keep < 1 || cfg.Keep > cfg.Frames {
		return nil, fmt.Errorf("PendulumWith: Keep = %d of Frames = %d, want 1 <= Keep <= Frames", cfg.Keep, cfg.Frames)
	}
	if !(cfg.Dt > 0) || !(cfg.SimDt > 0) || cfg.SimDt > cfg.Dt {
		return nil, fmt.Errorf("PendulumWith: Dt = %v, SimDt = %v, want 0 < SimDt <= Dt", cfg.Dt, cfg.SimDt)
	}
	if !(cfg.Friction >= 0) || !(cfg.TransitionNoise >= 0) || cfg.CleanFrames < 0 {
		return nil, fmt.Errorf("PendulumWith: Friction, TransitionNoise and CleanFrames must be >= 0")
	}
	const pix = PendulumSize * PendulumSize
	ds := &data.Dataset{
		Name:           "pendulum",
		C:              pix,
		D:              1,
		TargetDim:      2,
		TargetPerToken: true,
		Samples:        make([]data.Sample, n),
	}
	parallelFor(n, func(i int) {
		rng := sampleRNG(seed, "pendulum", i)
		theta, _ := simulatePendulum(rng, cfg)
		var factors []float64
		if cfg.ImageNoise {
			factors = pendulumNoiseFactors(rng, cfg.Frames, cfg.CleanFrames)
		}
		kept := chooseSorted(rng, cfg.Frames, cfg.Keep)
		s := data.Sample{
			ID:        sampleID("pendulum", i),
			Values:    make([]float32, cfg.Keep*pix),
			Positions: make([]float32, cfg.Keep),
			Target:    make([]float32, 2*cfg.Keep),
			Label:     -1,
		}
		for t, k := range kept {
			phi := theta[k] - math.Pi
			img := s.Values[t*pix : (t+1)*pix]
			renderPendulum(img, phi, cfg.Ball)
			if factors != nil && factors[k] < 1 {
				f := float32(factors[k])
				for p := range img {
					img[p] = f*img[p] + (1-f)*rng.Float32()
				}
			}
			s.Positions[t] = float32(k)
			s.Target[2*t] = float32(math.Sin(phi))
			s.Target[2*t+1] = float32(math.Cos(phi))
		}
		ds.Samples[i] = s
	})
	return ds, nil
}

// pendulumC is g·l·m/I for m = l = 1, I = m l²/3.
const pendulumC = 9.81 * 3

// simulatePendulum returns θ (CRU's simulator angle, wrapped to [0, 2π)) and
// ω at every frame.
func simulatePendulum(rng *rand.Rand, cfg PendulumConfig) (theta, omega []float64) {
	theta = make([]float64, cfg.Frames)
	omega = make([]float64, cfg.Frames)
	th, om := rng.Float64()*2*math.Pi, 0.0
	theta[0], omega[0] = th, om
	steps := max(1, int(math.Round(cfg.Dt/cfg.SimDt)))
	h := cfg.SimDt
	for k := 1; k < cfg.Frames; k++ {
		// sin θ is carried along by rotating (sin θ, cos θ) through each
		// small increment d = h·ω (|d| < 1e-2, series error < d⁵/120) and
		// recomputed exactly at every frame: the same trajectory as calling
		// math.Sin each substep to ~1e-13, at a fraction of the cost.
		sn, cs := math.Sincos(th)
		for range steps {
			om += h * (pendulumC*sn - cfg.Friction*om)
			d := h * om
			th += d
			d2 := d * d
			sd, cd := d*(1-d2/6), 1-d2/2*(1-d2/12)
			sn, cs = sn*cd+cs*sd, cs*cd-sn*sd
		}
		if cfg.TransitionNoise > 0 {
			om += cfg.TransitionNoise * rng.NormFloat64()
		}
		th = math.Mod(th, 2*math.Pi)
		if th < 0 {
			th += 2 * math.Pi
		}
		theta[k], omega[k] = th, om
	}
	return theta, omega
}

// pendulumEnergy is the conserved quantity of the frictionless dynamics.
func pendulumEnergy(theta, omega float64) float64 {
	return omega*omega/2 + pendulumC*math.Cos(theta)
}

// pendulumNoiseFactors is CRU's add_img_noise factor process (see
// PendulumWith): 1 = clean frame, 0 = pure noise.
func pendulumNoiseFactors(rng *rand.Rand, frames, clean int) []float64 {
	const r = 0.2
	f := make([]float64, frames)
	f[0] = rng.Float64()
	for k := 1; k < frames; k++ {
		f[k] = clamp01(f[k-1] + uniform(rng, -r, r))
	}
	t1 := uniform(rng, 0, 0.25)
	t2 := uniform(rng, 0.75, 1)
	for k := range f {
		f[k] = clamp01((f[k] - t1) / (t2 - t1))
		if k < clean {
			f[k] = 1
		}
	}
	return f
}

// renderPendulum draws the pendulum at angle phi (0 = hanging down) into the
// 24×24 row-major img, overwriting it. Geometry is CRU's 128-pixel canvas
// scaled to 24 pixels.
func renderPendulum(img []float32, phi float64, ball bool) {
	const (
		scale  = float64(PendulumSize) / 128
		pivot  = 64 * scale
		rodLen = 55 * scale
		halfW  = 4 * scale
		ballAt = 50 * scale
		ballR  = 8 * scale
	)
	clear(img)
	sin, cos := math.Sincos(phi)
	// Only pixels within reach of the shape can be covered: scan the
	// bounding box of pivot and tip (or of the ball), widened by the
	// half-width plus one pixel for the antialiased edge.
	reach, far := halfW+1, rodLen
	if ball {
		reach, far = ballR+1, ballAt
	}
	tx, ty := pivot+far*sin, pivot+far*cos
	x0, x1 := pixelRange(min(tx, pivot)-reach, max(tx, pivot)+reach)
	y0, y1 := pixelRange(min(ty, pivot)-reach, max(ty, pivot)+reach)
	if ball {
		x0, x1 = pixelRange(tx-reach, tx+reach)
		y0, y1 = pixelRange(ty-reach, ty+reach)
	}
	for row := y0; row < y1; row++ {
		dy := float64(row) + 0.5 - pivot
		for col := x0; col < x1; col++ {
			dx := float64(col) + 0.5 - pivot
			var cov float64
			if ball {
				ex, ey := dx-ballAt*sin, dy-ballAt*cos
				cov = clamp01(ballR + 0.5 - math.Hypot(ex, ey))
			} else {
				u := dx*sin + dy*cos  // along the rod, from the pivot
				v := -dx*cos + dy*sin // across the rod
				cov = clamp01(halfW+0.5-math.Abs(v)) * clamp01(min(u, rodLen-u)+0.5)
			}
			img[row*PendulumSize+col] = float32(cov)
		}
	}
}

// pixelRange returns the pixel indices [lo, hi) whose centres may lie in
// [a, b], clipped to the image.
func pixelRange(a, b float64) (int, int) {
	return max(0, int(math.Floor(a))), min(PendulumSize, int(math.Ceil(b))+1)
}
