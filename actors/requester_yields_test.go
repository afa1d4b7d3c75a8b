package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestRequesterYieldsRefusesNegative: a negative count is a bad definition.
func TestRequesterYieldsRefusesNegative(t *testing.T) {
	rt := newTestRuntime(t)
	_, err := Launch(testCtx(t), rt, NewStatelessKernel("yields.negative", echoNum, WithRequesterYields(-1)))
	wantErr(t, err, ErrInvalidKernel)
}

// TestRequesterYields runs requests through kernels whose requesters park
// at once (0), yield as by default (1) or yield several times (4): every
// request gets its own reply, sequentially and from concurrent requesters,
// and a requester whose context ends while its message is in the handler
// gets the context's error, after which the kernel answers the next one.
func TestRequesterYields(t *testing.T) {
	for _, yields := range []int{0, DefaultRequesterYields, 4} {
		t.Run(fmt.Sprintf("yields %d", yields), func(t *testing.T) {
			rt := newTestRuntime(t)
			release := make(chan struct{})
			started := make(chan struct{}, 1)
			h := func(_ context.Context, n num) (total, error) {
				if n.V < 0 { // held in the handler until released
					started <- struct{}{}
					<-release
				}
				return total{Sum: n.V}, nil
			}
			k := mustLaunch(t, rt, NewStatelessKernel(fmt.Sprintf("yields.%d", yields), h, WithRequesterYields(yields)), true)
			ctx := testCtx(t)

			for i := range 2000 {
				r, err := k.Request(ctx, num{V: i})
				if err != nil || r.Sum != i {
					t.Fatalf("request %d: %+v, %v", i, r, err)
				}
			}

			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := range 8 {
				wg.Go(func() {
					for i := range 300 {
						v := g*1000 + i
						if r, err := k.Request(ctx, num{V: v}); err != nil || r.Sum != v {
							errs <- fmt.Errorf("requester %d, request %d: %+v, %v", g, i, r, err)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}

			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := k.Request(cctx, num{V: -1})
				done <- err
			}()
			<-started
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("a request whose context ended: %v, want context.Canceled", err)
			}
			close(release)
			if r, err := k.Request(ctx, num{V: 7}); err != nil || r.Sum != 7 {
				t.Fatalf("the request after: %+v, %v", r, err)
			}
		})
	}
}
