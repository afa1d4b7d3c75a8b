package compute_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ringactor/ringactor/compute"
	"github.com/ringactor/ringactor/gpu"
)

// An Orchestrator runs named compute kernels on buffers without a ring
// kernel runtime: it picks the backend (the CPU for small work), checks
// dtypes and shapes, recovers from device failures and profiles the call.
func ExampleOrchestrator_Execute() {
	ctx := context.Background()
	orc, err := compute.New()
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := orc.Close(); err != nil {
			log.Fatal(err)
		}
	}()
	a, err := gpu.NewBuffer([]float32{1, 2, 3, 4}, 2, 2)
	if err != nil {
		log.Fatal(err)
	}
	b, err := gpu.NewBuffer([]float32{1, 0, 0, 1}, 2, 2)
	if err != nil {
		log.Fatal(err)
	}
	var p compute.ExecProfile
	out, err := orc.Execute(ctx, "matmul", []*gpu.UnifiedBuffer{a, b}, gpu.Shape{2, 2}, compute.Profiled(&p))
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := out.Free(); err != nil { // back to the pool
			log.Fatal(err)
		}
	}()
	v, err := gpu.ToSlice[float32](ctx, out)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v, p.Backend)

	// A bad call is an error (a *gpu.ArgumentError here), not a panic.
	if _, err = orc.Execute(ctx, "add", []*gpu.UnifiedBuffer{a}, nil); err != nil {
		fmt.Println(err)
	}
	// Output:
	// [1 2 3 4] cpu
	// kernel "add": inputs: takes 2 inputs, got 1
}

// ExecuteBatch runs one kernel on many small items in one call: one check,
// one backend choice, one telemetry record and one trip to the pool for
// the whole batch.
func ExampleOrchestrator_ExecuteBatch() {
	ctx := context.Background()
	orc, err := compute.New()
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := orc.Close(); err != nil {
			log.Fatal(err)
		}
	}()
	var items [][]*gpu.UnifiedBuffer
	for i := range 3 {
		x, err := gpu.NewBuffer([]float32{float32(i), 1})
		if err != nil {
			log.Fatal(err)
		}
		items = append(items, []*gpu.UnifiedBuffer{x})
	}
	outs, err := orc.ExecuteBatch(ctx, "scale", items, compute.WithScalars(10))
	if err != nil {
		log.Fatal(err)
	}
	for _, out := range outs {
		v, err := gpu.ToSlice[float32](ctx, out)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(v)
		if err := out.Free(); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// [0 10]
	// [10 10]
	// [20 10]
}

// Reduce returns a reduction's scalar; a pipeline keeps intermediates where
// they were computed; Submit runs a call in the background.
func ExampleReduce() {
	ctx := context.Background()
	orc, err := compute.New()
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := orc.Close(); err != nil {
			log.Fatal(err)
		}
	}()
	a, err := gpu.NewBuffer([]float32{1, -2, 3, 4})
	if err != nil {
		log.Fatal(err)
	}
	sum, err := compute.Reduce[float32](ctx, orc, "sum", a)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum)

	y, err := orc.NewPipeline().Then("scale", nil, compute.WithScalars(-2)).Then("relu", nil).Run(ctx, a)
	if err != nil {
		log.Fatal(err)
	}
	v, err := gpu.ToSlice[float32](ctx, y)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v)

	job := orc.Submit(ctx, "add", []*gpu.UnifiedBuffer{a, a}, nil)
	out, err := job.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if v, err = gpu.ToSlice[float32](ctx, out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(v, job.Poll())
	// Output:
	// 6
	// [0 4 0 0]
	// [2 -4 6 8] completed
}
