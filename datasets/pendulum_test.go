package datasets

import (
	"math"
	"slices"
	"testing"
)

func TestPendulumShapes(t *testing.T) {
	ds := Pendulum(40, 3)
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	const pix = PendulumSize * PendulumSize
	if ds.C != pix || ds.D != 1 || ds.TargetDim != 2 || !ds.TargetPerToken {
		t.Fatalf("layout C=%d D=%d TargetDim=%d", ds.C, ds.D, ds.TargetDim)
	}
	noisyFrames := 0
	for _, s := range ds.Samples {
		if s.Len(pix) != 50 {
			t.Fatalf("%s: %d frames kept, want 50", s.ID, s.Len(pix))
		}
		if !slices.IsSorted(s.Positions) || s.Positions[0] < 0 || s.Positions[49] > 99 {
			t.Fatalf("%s: frame times %v", s.ID, s.Positions)
		}
		for k := 1; k < 50; k++ {
			if s.Positions[k] == s.Positions[k-1] || s.Positions[k] != float32(int(s.Positions[k])) {
				t.Fatalf("%s: frame times %v not distinct integers", s.ID, s.Positions)
			}
		}
		for k := range 50 {
			sin, cos := float64(s.Target[2*k]), float64(s.Target[2*k+1])
			if math.Abs(sin*sin+cos*cos-1) > 1e-5 {
				t.Fatalf("%s frame %d: sin²+cos² = %v", s.ID, k, sin*sin+cos*cos)
			}
			img := s.Values[k*pix : (k+1)*pix]
			for _, v := range img {
				if v < 0 || v > 1 {
					t.Fatalf("%s: pixel %v outside [0, 1]", s.ID, v)
				}
			}
			// The first 5 frames are clean: exactly the rendering of the
			// target angle.
			want := make([]float32, pix)
			renderPendulum(want, math.Atan2(sin, cos), false)
			diff := 0.0
			for p := range img {
				diff = max(diff, math.Abs(float64(img[p]-want[p])))
			}
			switch {
			case s.Positions[k] < 5 && diff > 1e-5:
				t.Fatalf("%s: clean frame %v differs from its rendering by %v", s.ID, s.Positions[k], diff)
			case diff > 0.05:
				noisyFrames++
			}
		}
	}
	if noisyFrames < 40*50/4 {
		t.Errorf("only %d of %d frames carry visible noise", noisyFrames, 40*50)
	}
}

func TestPendulumEnergy(t *testing.T) {
	tests := []struct {
		name     string
		friction float64
	}{
		{"friction", 0.1},
		{"strong-friction", 1},
		{"frictionless", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultPendulumConfig()
			cfg.TransitionNoise = 0
			cfg.Friction = tc.friction
			cfg.Frames = 300
			for i := range 20 {
				theta, omega := simulatePendulum(sampleRNG(1, "energy", i), cfg)
				e0 := pendulumEnergy(theta[0], omega[0])
				prev := e0
				for k := 1; k < cfg.Frames; k++ {
					e := pendulumEnergy(theta[k], omega[k])
					// Semi-implicit Euler keeps a shadow energy: allow an
					// O(SimDt) wobble, never a systematic gain.
					if e > prev+0.05 || e > e0+0.05 {
						t.Fatalf("sample %d frame %d: energy rose %v -> %v", i, k, prev, e)
					}
					if tc.friction == 0 && math.Abs(e-e0) > 0.05 {
						t.Fatalf("sample %d frame %d: frictionless energy drifted %v -> %v", i, k, e0, e)
					}
					prev = min(prev, e)
				}
				// With friction the pendulum swings (ω ≠ 0) and loses
				// energy: ∫μω² dt over 3 s is well above the wobble unless
				// it starts (almost) at rest at the bottom or top.
				if tc.friction > 0 && math.Abs(omega[cfg.Frames/2]) > 1 && prev > e0-0.1 {
					t.Fatalf("sample %d: energy %v -> %v did not decay", i, e0, prev)
				}
			}
		})
	}
}

func TestPendulumRendering(t *testing.T) {
	img := make([]float32, PendulumSize*PendulumSize)
	const scale = float64(PendulumSize) / 128
	for _, phi := range []float64{0, 0.7, math.Pi / 2, 2.5, -1.2} {
		renderPendulum(img, phi, false)
		mass, cx, cy := 0.0, 0.0, 0.0
		for r := range PendulumSize {
			for c := range PendulumSize {
				v := float64(img[r*PendulumSize+c])
				mass += v
				cx += v * (float64(c) + 0.5)
				cy += v * (float64(r) + 0.5)
			}
		}
		cx, cy = cx/mass, cy/mass
		// The rod is 55×8 canvas pixels: about 10.3×1.5 image pixels.
		if want := 55 * 8 * scale * scale; math.Abs(mass-want)/want > 0.12 {
			t.Errorf("phi %v: rod area %v, want about %v", phi, mass, want)
		}
		// Its centroid lies half-way along the rod, in direction (sin, cos).
		wx, wy := 64*scale+27.5*scale*math.Sin(phi), 64*scale+27.5*scale*math.Cos(phi)
		if math.Hypot(cx-wx, cy-wy) > 0.35 {
			t.Errorf("phi %v: centroid (%.2f, %.2f), want (%.2f, %.2f)", phi, cx, cy, wx, wy)
		}
		renderPendulum(img, phi, true)
		mass = 0
		for _, v := range img {
			mass += float64(v)
		}
		if want := math.Pi * 8 * 8 * scale * scale; math.Abs(mass-want)/want > 0.15 {
			t.Errorf("phi %v: ball area %v, want about %v", phi, mass, want)
		}
	}
}

func TestPendulumNoiseFactors(t *testing.T) {
	for i := range 200 {
		f := pendulumNoiseFactors(sampleRNG(1, "factors", i), 100, 5)
		for k, v := range f {
			if v < 0 || v > 1 || (k < 5 && v != 1) {
				t.Fatalf("factor %d = %v", k, v)
			}
			// Temporal correlation: a step moves at most r/(t2-t1) <= 0.4.
			if k > 5 && math.Abs(v-f[k-1]) > 0.4+1e-12 {
				t.Fatalf("factor jumps %v -> %v", f[k-1], v)
			}
		}
	}
}

func TestPendulumConfigErrors(t *testing.T) {
	bad := []func(*PendulumConfig){
		func(c *PendulumConfig) { c.Keep = 101 },
		func(c *PendulumConfig) { c.Keep = 0 },
		func(c *PendulumConfig) { c.SimDt = 0 },
		func(c *PendulumConfig) { c.SimDt = 1 },
		func(c *PendulumConfig) { c.Friction = -1 },
	}
	for i, mod := range bad {
		cfg := DefaultPendulumConfig()
		mod(&cfg)
		if _, err := PendulumWith(1, 1, cfg); err == nil {
			t.Errorf("config %d accepted: %+v", i, cfg)
		}
	}
	if _, err := PendulumWith(0, 1, DefaultPendulumConfig()); err == nil {
		t.Error("n = 0 accepted")
	}
}

func BenchmarkPendulum4000(b *testing.B) {
	for b.Loop() {
		Pendulum(4000, 1)
	}
}

// TestPendulumFastPaths checks the two shortcuts against their plain
// versions: the rotated sin θ against math.Sin each substep, and the
// bounding-box rasteriser against a scan of every pixel.
func TestPendulumFastPaths(t *testing.T) {
	cfg := DefaultPendulumConfig()
	cfg.TransitionNoise = 0
	for i := range 10 {
		theta, omega := simulatePendulum(sampleRNG(1, "ref", i), cfg)
		th, om := theta[0], omega[0]
		for k := 1; k < cfg.Frames; k++ {
			for range 100 {
				om += cfg.SimDt * (pendulumC*math.Sin(th) - cfg.Friction*om)
				th += cfg.SimDt * om
			}
			th = math.Mod(th, 2*math.Pi)
			if th < 0 {
				th += 2 * math.Pi
			}
			if d := math.Remainder(th-theta[k], 2*math.Pi); math.Abs(d) > 1e-8 || math.Abs(om-omega[k]) > 1e-8 {
				t.Fatalf("sample %d frame %d: (%v, %v), reference (%v, %v)", i, k, theta[k], omega[k], th, om)
			}
		}
	}
	const s = float64(PendulumSize) / 128
	img := make([]float32, PendulumSize*PendulumSize)
	for _, ball := range []bool{false, true} {
		for phi := -math.Pi; phi < math.Pi; phi += 0.1 {
			for p := range img {
				img[p] = 7 // must be overwritten
			}
			renderPendulum(img, phi, ball)
			sin, cos := math.Sincos(phi)
			for r := range PendulumSize {
				for c := range PendulumSize {
					dx, dy := float64(c)+0.5-64*s, float64(r)+0.5-64*s
					var want float64
					if ball {
						want = clamp01(8*s + 0.5 - math.Hypot(dx-50*s*sin, dy-50*s*cos))
					} else {
						u, v := dx*sin+dy*cos, -dx*cos+dy*sin
						want = clamp01(4*s+0.5-math.Abs(v)) * clamp01(min(u, 55*s-u)+0.5)
					}
					if got := float64(img[r*PendulumSize+c]); math.Abs(got-want) > 1e-6 {
						t.Fatalf("ball=%v phi=%.1f pixel (%d,%d) = %v, full scan %v", ball, phi, r, c, got, want)
					}
				}
			}
		}
	}
}
