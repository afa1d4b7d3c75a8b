package actors

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

type seq struct{ Sender, N int }

// TestConcurrentSendersKeepOrder hammers one small kernel from several
// senders that pause at random, while the gate is toggled: every message
// arrives exactly once, and each sender's messages arrive in its order.
func TestConcurrentSendersKeepOrder(t *testing.T) {
	const senders, per = 6, 3000
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("order", func(_ context.Context, s seq) (seq, error) { return s, nil },
		WithCapacity(8), WithOverflow(4)), true)
	var wg sync.WaitGroup
	for g := 0; g < senders; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			for i := 0; i < per; i++ {
				if _, err := k.Send(ctx, seq{Sender: g, N: i}); err != nil {
					t.Error(err)
					return
				}
				if rng.IntN(32) == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	toggled := make(chan struct{})
	go func() { // close and reopen the gate while traffic flows
		defer close(toggled)
		for i := 0; i < 20; i++ {
			if err := k.Deactivate(ctx); err != nil {
				t.Error(err)
				return
			}
			runtime.Gosched()
			if err := k.Reactivate(ctx); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	next := make([]int, senders)
	for i := 0; i < senders*per; i++ {
		s, err := k.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.N != next[s.Sender] {
			t.Fatalf("sender %d: got %d, want %d", s.Sender, s.N, next[s.Sender])
		}
		next[s.Sender]++
	}
	wg.Wait()
	<-toggled
	if st := k.Telemetry(); st.Processed != senders*per || st.Dropped != 0 {
		t.Fatalf("%+v", st)
	}
}
