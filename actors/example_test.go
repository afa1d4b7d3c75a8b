package actors_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/messages"
)

// VectorAddRequest and VectorAddResponse are the quick start's messages.
type VectorAddRequest struct{ A, B []float32 }

// VectorAddResponse carries the element-wise sum.
type VectorAddResponse struct{ Sum []float32 }

func init() {
	messages.MustRegister[VectorAddRequest]("example.vector_add.request")
	messages.MustRegister[VectorAddResponse]("example.vector_add.response")
}

// The quick start: declare a ring kernel with a typed handler, launch and
// activate it, send it messages and get replies, then shut it down.
func Example() {
	ctx := context.Background()
	rt, err := actors.NewRuntime()
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)

	vectorAdd := actors.NewStatelessKernel("vector_add",
		func(ctx context.Context, r VectorAddRequest) (VectorAddResponse, error) {
			if len(r.A) != len(r.B) {
				return VectorAddResponse{}, fmt.Errorf("lengths %d and %d differ", len(r.A), len(r.B))
			}
			sum := make([]float32, len(r.A))
			for i := range r.A {
				sum[i] = r.A[i] + r.B[i]
			}
			return VectorAddResponse{Sum: sum}, nil
		})
	k, err := actors.Launch(ctx, rt, vectorAdd)
	if err != nil {
		log.Fatal(err)
	}
	if err := k.Activate(ctx); err != nil {
		log.Fatal(err)
	}

	// Fire and forget, then read the receive stream.
	if _, err := k.Send(ctx, VectorAddRequest{A: []float32{1, 2, 3}, B: []float32{4, 5, 6}}); err != nil {
		log.Fatal(err)
	}
	resp, err := k.Receive(ctx)
	fmt.Println(resp.Sum, err)

	// Request and wait for the typed reply, by id through the runtime.
	resp, err = actors.Request[VectorAddResponse](ctx, rt, "vector_add", VectorAddRequest{A: []float32{1}, B: []float32{1}})
	fmt.Println(resp.Sum, err)

	// A failing handler answers with an ExecutionError; the kernel keeps going.
	_, err = k.Request(ctx, VectorAddRequest{A: []float32{1}})
	var ee *gpu.ExecutionError
	fmt.Println(errors.As(err, &ee), ee.Kernel, ee.Err)

	fmt.Println(rt.Deactivate(ctx, "vector_add"), rt.Reactivate(ctx, "vector_add"), rt.Terminate(ctx, "vector_add"))
	st, _ := rt.Status("vector_add")
	fmt.Println(st.State, st.Processed, st.Errors)
	// Output:
	// [5 7 9] <nil>
	// [2] <nil>
	// true vector_add lengths 1 and 0 differ
	// <nil> <nil> <nil>
	// terminated 3 1
}
