package cuda_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda"
)

// A kernel written in CUDA C is compiled with NVRTC when it is registered,
// so a mistake in the source is an error here, not at the first call. The
// kernel runs on the runtime's CUDA backend when a device is usable; the Go
// fallback runs it everywhere else (and on small work). Without NVRTC
// installed, SourceKernel returns the kernel with its fallback only.
func Example_sourceKernel() {
	ctx := context.Background()
	rt, err := actors.NewRuntime(actors.WithTelemetry(false))
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := rt.Close(ctx); err != nil {
			log.Fatal(err)
		}
	}()

	// The runtime's CUDA backend runs the compiled PTX.
	var backend *cuda.Backend
	for _, b := range rt.Backends() {
		if cb, ok := b.(*cuda.Backend); ok {
			backend = cb
		}
	}

	spec, err := cuda.SourceKernel(ctx, backend, cuda.SourceSpec{
		Name: "axpy", Inputs: 2, DTypes: []gpu.DType{gpu.F32}, Elementwise: true,
		Scalars: []gpu.ScalarSpec{{Name: "a", Default: 1}},
		Entry:   "axpy",
		// Inputs, output, scalars as double, element count.
		Code: `
extern "C" __global__ void axpy(const float *x, const float *y, float *out,
                                double a, unsigned long long n) {
	unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
	if (i < n) out[i] = (float)a * x[i] + y[i];
}`,
		CPU: func(_ context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, sc []float64) error {
			x, err := gpu.HostSlice[float32](in[0])
			if err != nil {
				return err
			}
			y, err := gpu.HostSlice[float32](in[1])
			if err != nil {
				return err
			}
			o, err := gpu.HostSlice[float32](out)
			if err != nil {
				return err
			}
			for i := range o {
				o[i] = float32(sc[0])*x[i] + y[i]
			}
			return nil
		},
	})
	if err != nil {
		log.Fatal(err) // a *gpu.CompilationError carries NVRTC's log
	}
	if err := rt.RegisterKernel(ctx, spec); err != nil {
		log.Fatal(err)
	}

	x, err := gpu.NewBuffer([]float32{1, 2, 3})
	if err != nil {
		log.Fatal(err)
	}
	y, err := gpu.NewBuffer([]float32{10, 20, 30})
	if err != nil {
		log.Fatal(err)
	}
	out, err := rt.Execute(ctx, "axpy", []*gpu.UnifiedBuffer{x, y}, nil, actors.WithScalars(2))
	if err != nil {
		log.Fatal(err)
	}
	v, err := gpu.ToSlice[float32](ctx, out)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v)
	// Output: [12 24 36]
}
