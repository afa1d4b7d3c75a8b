//go:build linux && cgo

package ringrt

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/messages"
)

// TestMailboxesShareOneGrid opens many mailboxes of one program: one grid
// launch serves them all, each keeps its own State (zeroed when the
// mailbox is opened again in a reused table entry), order and replies.
// With 8 blocks most are idle at any time: the idle blocks' watcher role
// (grid_loop.cuh) is handed over each time its holder takes work.
func TestMailboxesShareOneGrid(t *testing.T) {
	for _, blocks := range []int{0, 8} {
		t.Run(fmt.Sprintf("blocks=%d", blocks), func(t *testing.T) { testMailboxesShareOneGrid(t, blocks) })
	}
}

func testMailboxesShareOneGrid(t *testing.T, blocks int) {
	b, fd := newSimBackend(t, nil)
	b.opt.GridBlocks = blocks
	if blocks > 0 {
		fd.SetExecShape(blocks, 4)
	}
	p := loadSaxpy(t, b)
	if err := b.StartGrid(p, 4); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 2 {
		ks := make([]*Kernel, 20)
		for i := range ks {
			k, err := b.Open(p, Config{Threads: 4})
			if err != nil {
				t.Fatal(err)
			}
			if k.PinnedBytes() > MailboxPinnedMax {
				t.Fatalf("a mailbox pins %d bytes", k.PinnedBytes())
			}
			k.Activate()
			ks[i] = k
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(ks))
		for i, k := range ks {
			seed := rng.Uint64()
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(seed, uint64(i)))
				for m := range 30 {
					req := saxpyReq{N: uint32(r.IntN(65)), A: r.Float32()*4 - 2}
					for j := range req.N {
						req.X[j], req.Y[j] = r.Float32()*100-50, r.Float32()*100-50
					}
					if ok, err := k.TrySubmit(1, uint64(m), messages.FixedBytes(&req)); !ok || err != nil {
						errs <- errors.Join(err, errors.New("submit refused"))
						return
					}
					var h ring.SlotHeader
					var got []byte
					for deadline := time.Now().Add(time.Minute); ; {
						var ok bool
						if h, got, ok = k.TryPoll(); ok {
							break
						}
						if time.Now().After(deadline) {
							errs <- errors.New("no reply")
							return
						}
						time.Sleep(20 * time.Microsecond)
					}
					want := saxpyWant(req, uint64(m+1))
					if h.CorrelationID != uint64(m) || h.Status != ring.StatusOK || string(got) != string(messages.FixedBytes(&want)) {
						errs <- errors.New("wrong reply")
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		for _, k := range ks {
			if err := k.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := fd.Sim().Launches("rc_grid_saxpy"); n != 1 {
		t.Fatalf("%d grid launches, want 1", n)
	}
	if n := fd.Sim().Launches("rc_ring_saxpy"); n != 0 {
		t.Fatalf("%d kernel launches, want 0", n)
	}
	if s := b.MailboxStats(); s.Grids != 1 || s.Mailboxes != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestMailboxTableFull: a full table is gpu.ErrDeviceCapacity at once.
func TestMailboxTableFull(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	b.opt.Mailboxes = 64
	p := loadSaxpy(t, b)
	var ks []*Kernel
	for {
		k, err := b.Open(p, Config{Capacity: 2})
		if err != nil {
			if !errors.Is(err, gpu.ErrDeviceCapacity) || !errors.Is(err, gpu.ErrDevice) {
				t.Fatalf("full table: %v", err)
			}
			break
		}
		ks = append(ks, k)
	}
	if len(ks) != 64 {
		t.Fatalf("%d mailboxes before the table was full", len(ks))
	}
	for _, k := range ks {
		if err := k.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	k, err := b.Open(p, Config{Capacity: 2})
	if err != nil {
		t.Fatalf("after closing: %v", err)
	}
	_ = k.Close(context.Background())
}

// TestMailboxesSurviveEpochs: device epochs back to back park and
// relaunch the grid while its mailboxes exchange messages; every reply
// comes back once, in order, and each mailbox keeps its State across the
// relaunches (the grid rings every mailbox again and settles them).
func TestMailboxesSurviveEpochs(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	p := loadSaxpy(t, b)
	ks := make([]*Kernel, 4)
	for i := range ks {
		k, err := b.Open(p, Config{})
		if err != nil {
			t.Fatal(err)
		}
		k.Activate()
		ks[i] = k
	}
	stop := make(chan struct{})
	epochs := make(chan error, 1)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				if n == 0 {
					epochs <- errors.New("no epoch ran")
				} else {
					epochs <- nil
				}
				return
			default:
			}
			if _, err := b.Epoch(context.Background()); err != nil {
				epochs <- err
				return
			}
			n++
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, len(ks))
	for i, k := range ks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range 100 {
				req := saxpyReq{N: 3, A: float32(i + 1), X: [64]float32{1, 2, 3}, Y: [64]float32{float32(m)}}
				for {
					ok, err := k.TrySubmit(1, uint64(m), messages.FixedBytes(&req))
					if err != nil {
						errs <- err
						return
					}
					if ok {
						break
					}
					time.Sleep(10 * time.Microsecond)
				}
				deadline := time.Now().Add(time.Minute)
				for {
					h, got, ok := k.TryPoll()
					if ok {
						want := saxpyWant(req, uint64(m+1))
						if h.CorrelationID != uint64(m) || string(got) != string(messages.FixedBytes(&want)) {
							errs <- errors.New("wrong reply or lost State")
							return
						}
						break
					}
					if time.Now().After(deadline) {
						errs <- errors.New("no reply within a minute")
						return
					}
					time.Sleep(10 * time.Microsecond)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-epochs; err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := b.EpochStats(); st.Count == 0 {
		t.Fatalf("epoch stats %+v", st)
	}
	for _, k := range ks {
		if err := k.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGridResidencyExhausted: once the program grids a device may keep
// resident are running, another program (here: another block size) gets
// gpu.ErrDeviceCapacity at once, while the running grid keeps serving.
func TestGridResidencyExhausted(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	b.opt.GridLimit = 1
	p := loadSaxpy(t, b)
	k, err := b.Open(p, Config{Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(p, Config{Threads: 2}); !errors.Is(err, gpu.ErrDeviceCapacity) || !errors.Is(err, gpu.ErrDevice) {
		t.Fatalf("a second grid past the limit: %v", err)
	}
	k.Activate()
	req := saxpyReq{N: 1, A: 2, X: [64]float32{3}, Y: [64]float32{1}}
	if h, got := exchangeProgram(t, k, 1, messages.FixedBytes(&req)); h.Status != ring.StatusOK || string(got) != string(messages.FixedBytes(&[]saxpyResp{saxpyWant(req, 1)}[0])) {
		t.Fatalf("reply %+v", h)
	}
	if err := k.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
