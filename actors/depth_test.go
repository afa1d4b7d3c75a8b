package actors

import "testing"

// TestDepthWhileDeliveryBlocks: Depth counts what waits in the ring at every
// moment, including while the loop is held between giving a batch's slots
// back and ending the batch (here: blocked handing the batch's last reply to
// a full receive stream). Depth used to be the ring's length less the
// batch's answered messages, which the release had already taken out of the
// length: messages sent in that moment were counted too few (the
// backpressure_block scenario saw depth=1 for 3 queued).
func TestDepthWhileDeliveryBlocks(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("depth", echoNum, WithCapacity(4), WithOverflow(1), WithOutputCapacity(1)), false)
	fill(t, k, 1, 2)
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	// Both are answered once Processed says so: the first reply fills the
	// stream, the loop waits to hand over the second, its slots released.
	for k.Telemetry().Processed != 2 {
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
		waitTurn()
	}
	if d := k.Telemetry().Depth; d != 0 {
		t.Fatalf("depth %d with every message answered, want 0", d)
	}
	fill(t, k, 3, 3) // 3 queued while the loop waits on the stream
	if st := k.Telemetry(); st.Depth != 3 || st.Processed != 2 {
		t.Fatalf("processed %d depth %d, want 2 and 3", st.Processed, st.Depth)
	}
	for want := 1; want <= 5; want++ {
		r, err := k.Receive(ctx)
		if err != nil || r.Sum != want {
			t.Fatalf("Receive = %v %v, want %d", r, err, want)
		}
	}
	if st := k.Telemetry(); st.Depth != 0 || st.Processed != 5 {
		t.Fatalf("processed %d depth %d at the end, want 5 and 0", st.Processed, st.Depth)
	}
}
