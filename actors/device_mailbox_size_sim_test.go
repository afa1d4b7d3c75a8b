//go:build linux && cgo

package actors

import (
	"context"
	"testing"

	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/messages"
)

// wideLen makes wideReq a 24 KiB message.
const wideLen = 6142

// wideReq is a 24 KiB request: the sum of X's first N elements.
type wideReq struct {
	N uint32
	_ uint32
	X [wideLen]float32
}

// wideResp is wideReq's reply.
type wideResp struct {
	Sum float64
}

func init() {
	messages.MustRegister[wideReq]("ringactor.actors.test.wide.request")
	messages.MustRegister[wideResp]("ringactor.actors.test.wide.response")
}

const wideCUDA = `
__device__ uint32_t wide(const rc_ctx *ctx, const wideReq *req, wideResp *resp, rc_no_state *) {
	if (ctx->thread == 0) {
		double s = 0;
		for (uint32_t i = 0; i < req->N && i < 6142u; i++) {
			s += (double)req->X[i];
		}
		resp->Sum = s;
	}
	return RC_STATUS_OK;
}
`

func wideFallback() Handler[wideReq, wideResp] {
	return func(_ context.Context, q wideReq) (wideResp, error) {
		var s float64
		for i := range min(int(q.N), wideLen) {
			s += float64(q.X[i])
		}
		return wideResp{Sum: s}, nil
	}
}

// TestDeviceKernelLargeMessages: a device ring kernel of 24 KiB messages
// runs on the device with the backend's defaults (its mailbox pins about
// 100 KiB, 2 slots a ring, under the 128 KiB bound); WithCapacity reaches
// its mailbox as the most slots a ring gets (8 slots of 24 KiB would pin
// four times the bound: it gets 2, and runs), and for small messages
// WithCapacity(4) gives a mailbox smaller than the default's 16 slots.
func TestDeviceKernelLargeMessages(t *testing.T) {
	if n := len(messages.FixedBytes(&wideReq{})); n < 24<<10 {
		t.Fatalf("wideReq is %d bytes", n)
	}
	b := simdevice.NewBackend(256 << 20)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("closing the simulated backend: %v", err)
		}
	})
	rt := newTestRuntime(t, WithBackends(b))
	src := DeviceSource{Code: wideCUDA, Entry: "wide"}
	def, err := NewDeviceRingKernel("wide", src, wideFallback)
	if err != nil {
		t.Fatal(err)
	}
	if err := PrepareDevice(rt, def); err != nil {
		t.Fatal(err)
	}
	k := mustLaunch(t, rt, def, true)
	if k.Placement() != b.Name() {
		t.Fatalf("a 24 KiB-message kernel placed on %q (%v)", k.Placement(), k.PlacementReason())
	}
	var q wideReq
	q.N = wideLen
	want := 0.0
	for i := range q.X {
		q.X[i] = float32(i % 7)
		want += float64(q.X[i])
	}
	if got, err := k.Request(testCtx(t), q); err != nil || got.Sum != want {
		t.Fatalf("sum = %v, %v: want %v", got.Sum, err, want)
	}
	pinned := b.MailboxStats().PinnedBytes

	small, err := NewDeviceRingKernel("wide-8", src, wideFallback, WithCapacity(8), WithOnDeviceCapacity(CapacityError))
	if err != nil {
		t.Fatal(err)
	}
	if err := PrepareDevice(rt, small); err != nil {
		t.Fatal(err)
	}
	ks := mustLaunch(t, rt, small, true)
	if ks.Placement() != b.Name() {
		t.Fatalf("WithCapacity(8) placed on %q (%v)", ks.Placement(), ks.PlacementReason())
	}
	if got, err := ks.Request(testCtx(t), q); err != nil || got.Sum != want {
		t.Fatalf("sum = %v, %v: want %v", got.Sum, err, want)
	}
	if all := b.MailboxStats().PinnedBytes; all-pinned != pinned {
		t.Fatalf("WithCapacity(8) of 24 KiB messages pins %d bytes beside the default's (2 slots) %d", all-pinned, pinned)
	}

	// Small messages: the default is 16 slots a ring, WithCapacity(4) four.
	for _, c := range []struct {
		id   string
		opts []KernelOption
	}{{"saxpy-default", nil}, {"saxpy-4", []KernelOption{WithCapacity(4)}}} {
		def, err := NewDeviceRingKernel(c.id, DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, newSaxpyFallback(c.id), c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := PrepareDevice(rt, def); err != nil {
			t.Fatal(err)
		}
		before := b.MailboxStats().PinnedBytes
		k := mustLaunch(t, rt, def, true)
		grew := b.MailboxStats().PinnedBytes - before
		if c.opts == nil {
			pinned = grew
			continue
		}
		if k.Placement() != b.Name() || grew <= 0 || grew >= pinned/2 {
			t.Fatalf("WithCapacity(4) on %q pins %d bytes beside the default's %d", k.Placement(), grew, pinned)
		}
	}
}
