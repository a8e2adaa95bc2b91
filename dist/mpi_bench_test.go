//go:build mpi && cgo

package dist

import (
	"fmt"
	"os"
	"testing"

	"romae/model"
)

// TestMain finalizes MPI when the benchmark below opened it.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchComm != nil {
		benchComm.Close()
	}
	os.Exit(code)
}

var benchComm Comm

// BenchmarkAllreduce times AllreduceSum32 on gradient buffers the size of
// RoMAE-tiny, small and base (tiny-shallow decoder, as `romae bench`).
// It needs an MPI launch, and a fixed count so that every rank calls the
// collective equally often (scripts/bench-dist.sh runs it):
//
//	mpirun -np 2 ./dist.test -test.run '^$' -test.bench Allreduce -test.benchtime 10x
//
// busbw is the ring-allreduce bus bandwidth, 2(N−1)/N · bytes / time,
// the figure comparable across rank counts and with a link's rate.
func BenchmarkAllreduce(b *testing.B) {
	if launched, _ := Launched(); !launched {
		b.Skip("run under mpirun")
	}
	if benchComm == nil {
		c, err := Open()
		if err != nil {
			b.Fatal(err)
		}
		benchComm = c
	}
	c := benchComm
	dec, _ := model.ParseSize("tiny-shallow")
	for _, size := range []string{"tiny", "small", "base"} {
		enc, err := model.ParseSize(size)
		if err != nil {
			b.Fatal(err)
		}
		n := enc.Params() + dec.Params()
		buf := make([]float32, n)
		b.Run(fmt.Sprintf("%s/%.1fM-params/ranks=%d", size, float64(n)/1e6, c.Size()), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				if err := c.AllreduceSum32(buf); err != nil {
					b.Fatal(err)
				}
			}
			N := float64(c.Size())
			b.ReportMetric(2*(N-1)/N*float64(4*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "busGB/s")
		})
	}
}
