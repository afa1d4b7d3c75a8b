//go:build linux && cgo

package ringrt

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
	"github.com/ringactor/ringactor/messages"
)

// fairThreads is the block size of the fairness tests' grids (small: every
// thread of the simulated device is a host thread).
const fairThreads = 2

// fairBatch is how many requests (and replies) a feeder moves before it
// lets the other goroutines run.
const fairBatch = 64

// fairReq is request m of a saturated mailbox whose requests carry a.
func fairReq(a float32, m uint64) saxpyReq {
	return saxpyReq{N: 1, A: a, X: [64]float32{1}, Y: [64]float32{float32(m % 4096)}}
}

// saturator keeps a mailbox's input ring full until it is stopped, and
// checks every reply: the m-th reply answers request m, and the State
// counted exactly m+1 calls (so no message was lost, duplicated or
// reordered, and no two blocks served the mailbox at once, across every
// hand-over of the mailbox between blocks).
type saturator struct {
	k    *Kernel
	a    float32
	got  atomic.Uint64 // replies checked
	sent uint64        // requests published (the feeding goroutine only)
}

// run feeds s.k until stop is closed, then takes the replies to what it
// sent; it returns the first wrong reply, or a hang once ctx ends.
func (s *saturator) run(ctx context.Context, stop <-chan struct{}) error {
	stopping := false
	for {
		progress := false
		if !stopping {
			select {
			case <-stop:
				stopping = true
			default:
			}
		}
		for n := 0; !stopping && n < fairBatch; n++ {
			r := fairReq(s.a, s.sent)
			ok, err := s.k.TrySubmit(1, s.sent, messages.FixedBytes(&r))
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			s.sent++
			progress = true
		}
		for range fairBatch {
			h, got, ok := s.k.TryPoll()
			if !ok {
				break
			}
			m := s.got.Load()
			want := saxpyWant(fairReq(s.a, m), m+1)
			if h.CorrelationID != m || h.Status != ring.StatusOK || string(got) != string(messages.FixedBytes(&want)) {
				r, _ := messages.DecodeFixed[saxpyResp](got)
				return fmt.Errorf("mailbox %d reply %d: correlation %d status %d seen %d (want seen %d)",
					s.k.box, m, h.CorrelationID, h.Status, r.Seen, m+1)
			}
			s.got.Store(m + 1)
			progress = true
		}
		if stopping && s.got.Load() == s.sent {
			return nil
		}
		switch {
		case progress:
			runtime.Gosched() // between batches: the other goroutines' turn (a sparse poller's)
		case ctx.Err() != nil:
			return fmt.Errorf("mailbox %d: %d of %d replies: hung: %w", s.k.box, s.got.Load(), s.sent, ctx.Err())
		default:
			time.Sleep(20 * time.Microsecond) // the poll's pace, not a synchronisation
		}
	}
}

// saturation is a grid of blocks with n mailboxes kept saturated.
type saturation struct {
	b    *Runtime
	fd   simDevice
	p    *Program
	sats []*saturator
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	errs chan error
}

// saturate starts a grid of blocks blocks on a fresh simulated device and
// n mailboxes with input rings of depth slots kept full by a goroutine
// each (their rings pre-filled before the goroutines start). opts, when
// given, sets the runtime's options first (a table's sizes).
func saturate(t testing.TB, blocks, n, depth int, opts ...func(*Options)) *saturation {
	t.Helper()
	b, fd := newSimBackend(t, nil)
	for _, o := range opts {
		o(&b.opt)
	}
	b.opt.GridBlocks = blocks
	fd.SetExecShape(blocks, 4)
	b.opt.MailboxPinnedMax = 8 << 20 // deep rings: saturated for as long as the blocks run behind
	s := &saturation{b: b, fd: fd, p: loadProgram(t, b, saxpySpec()), stop: make(chan struct{}), errs: make(chan error, n)}
	if err := b.StartGrid(s.p, fairThreads); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		k, err := b.Open(s.p, Config{Capacity: depth, Threads: fairThreads})
		if err != nil {
			t.Fatal(err)
		}
		s.sats = append(s.sats, &saturator{k: k, a: float32(i + 2)})
	}
	for _, st := range s.sats {
		for { // pre-fill with the gate closed: the grid sees a full ring at once
			r := fairReq(st.a, st.sent)
			ok, err := st.k.TrySubmit(1, st.sent, messages.FixedBytes(&r))
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			st.sent++
		}
	}
	ctx, cancel := hangCtx(t)
	t.Cleanup(func() { // a test that failed early: stop the feeders before the device closes
		cancel()
		s.halt()
	})
	for _, st := range s.sats {
		st.k.Activate()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := st.run(ctx, s.stop); err != nil {
				s.errs <- err
			}
		}()
	}
	return s
}

// halt stops the feeders and waits until each has the replies to what it
// sent (or failed).
func (s *saturation) halt() {
	s.once.Do(func() {
		close(s.stop)
		s.wg.Wait()
		close(s.errs)
	})
}

// finish halts the feeders and fails t on any wrong or missing reply.
func (s *saturation) finish(t testing.TB) {
	t.Helper()
	s.halt()
	for err := range s.errs {
		t.Error(err)
	}
	for _, st := range s.sats {
		if err := st.k.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}
}

// progress returns each saturated mailbox's replies so far.
func (s *saturation) progress() []uint64 {
	n := make([]uint64, len(s.sats))
	for i, st := range s.sats {
		n[i] = st.got.Load()
	}
	return n
}

// handOvers reads how many times the grid's blocks have put a mailbox into
// the ready queue (its tail, in the simulated device's memory) since the
// table was made.
func (s *saturation) handOvers(t testing.TB) uint64 {
	t.Helper()
	g := s.sats[0].k.grid
	g.tabMu.RLock()
	defer g.tabMu.RUnlock()
	var w ring.GridWords
	if err := s.fd.Sim().CopyOut(unsafe.Pointer(&w), uint64(g.tab.words), uint64(unsafe.Sizeof(w))); err != nil {
		t.Fatal(err)
	}
	return w.ReadyTail
}

// sparseExchange submits one request to k (its m-th), waits for the reply
// (ctx is a hang guard) and checks it; it returns the round trip and the
// device's part of it (the request's stamp to the reply's publication,
// from the latency sum the grid keeps in k's control block).
func sparseExchange(ctx context.Context, k *Kernel, m int) (rtt, dev time.Duration, err error) {
	req := saxpyReq{N: 2, A: 3, X: [64]float32{1, 2}, Y: [64]float32{float32(m)}}
	sum0 := k.cb.LatencySum.Load()
	t0 := time.Now()
	if ok, err := k.TrySubmit(1, uint64(m), messages.FixedBytes(&req)); !ok || err != nil {
		return 0, 0, errors.Join(err, fmt.Errorf("submit %d refused", m))
	}
	for {
		h, got, ok := k.TryPoll()
		if ok {
			rtt = time.Since(t0)
			want := saxpyWant(req, uint64(m+1))
			if h.CorrelationID != uint64(m) || h.Status != ring.StatusOK || string(got) != string(messages.FixedBytes(&want)) {
				return 0, 0, fmt.Errorf("sparse reply %d: %+v", m, h)
			}
			return rtt, time.Duration(k.cb.LatencySum.Load() - sum0), nil
		}
		if ctx.Err() != nil {
			return 0, 0, fmt.Errorf("the sparse mailbox's request %d was never answered: %w", m, ctx.Err())
		}
		runtime.Gosched()
	}
}

// TestSparseMailboxServedAmongSaturated: a grid of 2 blocks serves 8
// mailboxes whose input rings (256 deep) are kept full the whole time.
// Before quanta a block kept its mailbox while the ring had work, so the
// 2 first mailboxes taken held both blocks for good: a ninth, sparse
// mailbox's request was never answered, and a device epoch, which waits
// for every mailbox's backlog before it parks the grid, failed with
// ErrEpochTimeout. Now each block serves a mailbox for a quantum and hands
// it over to the ready queue while others wait (grid_loop.cuh), so:
//   - every request of the sparse mailbox is answered (under the hang
//     guard; no bound on how fast) while the others stay saturated;
//   - every saturated mailbox makes progress meanwhile, and the blocks
//     handed mailboxes over;
//   - device epochs during the saturation complete (the second and third
//     wait for every mailbox's backlog from the relaunch before);
//   - each saturated mailbox's replies come in order, each request
//     answered once by a State that counted every call (no two blocks at
//     once, nothing lost), across all the hand-overs and relaunches.
func TestSparseMailboxServedAmongSaturated(t *testing.T) {
	for _, blocks := range []int{2, 3} {
		t.Run(fmt.Sprintf("blocks=%d", blocks), func(t *testing.T) { testSparseAmongSaturated(t, blocks) })
	}
}

func testSparseAmongSaturated(t *testing.T, blocks int) {
	s := saturate(t, blocks, 8, 2048)
	ctx, cancel := hangCtx(t)
	defer cancel()
	sparse, err := s.b.Open(s.p, Config{Threads: fairThreads})
	if err != nil {
		t.Fatal(err)
	}
	sparse.Activate()
	before := s.progress()
	var rtt, dev []time.Duration
	for m := range 20 {
		r, d, err := sparseExchange(ctx, sparse, m)
		if err != nil {
			s.finish(t)
			t.Fatal(err)
		}
		rtt, dev = append(rtt, r), append(dev, d)
	}
	// Every saturated mailbox progressed while the sparse one was served:
	// more of them than blocks, so only hand-overs let them all run.
	hangguard.Until(ctx, t, "every saturated mailbox served 512 more times", func() bool {
		for i, n := range s.progress() {
			if n < before[i]+512 {
				return false
			}
		}
		return true
	})
	handed := s.handOvers(t)
	if handed == 0 {
		t.Error("no mailbox was handed over to the ready queue")
	}
	// Epochs while saturated: the first parks a grid launched with no
	// backlog noted; the next ones settle every mailbox's backlog first.
	for e := range 3 {
		if _, err := s.b.Epoch(ctx); err != nil {
			s.finish(t)
			t.Fatalf("epoch %d during the saturation: %v", e, err)
		}
	}
	if st := s.b.EpochStats(); st.Count < 3 || st.RingsParked < 3 {
		t.Errorf("epoch stats %+v", st)
	}
	// The sparse mailbox again, on the relaunched grid.
	if _, _, err := sparseExchange(ctx, sparse, 20); err != nil {
		s.finish(t)
		t.Fatal(err)
	}
	s.finish(t)
	if err := sparse.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	slices.Sort(rtt)
	slices.Sort(dev)
	t.Logf("%d blocks, 8 saturated mailboxes: sparse round trip p50 %v (device part %v), max %v; %d hand-overs",
		blocks, rtt[len(rtt)/2], dev[len(dev)/2], rtt[len(rtt)-1], handed)
}

// TestTableGrowsWhileSaturated: the grid's table (6 entries at first,
// grown to 12 while the mailboxes open) is full of 12 mailboxes kept
// saturated by 2 blocks, the ready queue holding the ones waiting, when a
// thirteenth opens: the table grows, in a device epoch, to 24 entries (a
// ready queue of 32). The new table starts with an empty ready queue and
// every claim free, and the relaunch rings every mailbox, so the mailboxes
// the old ready queue held are served again: the new mailbox is answered,
// the saturated ones go on in order with nothing lost, blocks hand
// mailboxes over on the new table, and a second epoch (which waits for
// every mailbox's backlog from the growth's relaunch) completes.
func TestTableGrowsWhileSaturated(t *testing.T) {
	s := saturate(t, 2, 12, 2048, func(o *Options) { o.MailboxInit = 6 })
	ctx, cancel := hangCtx(t)
	defer cancel()
	hangguard.Until(ctx, t, "a mailbox handed over on the first table", func() bool { return s.handOvers(t) > 0 })
	g := s.sats[0].k.grid
	if _, c := g.mailboxes(); c != 12 || g.grows != 1 {
		t.Fatalf("table of %d entries after %d growths, want 12 after 1", c, g.grows)
	}
	sparse, err := s.b.Open(s.p, Config{Threads: fairThreads})
	if err != nil {
		t.Fatal(err)
	}
	if _, c := g.mailboxes(); c != 24 || g.grows != 2 {
		t.Fatalf("table of %d entries after %d growths, want 24 after 2", c, g.grows)
	}
	sparse.Activate()
	before := s.progress()
	for m := range 10 {
		if _, _, err := sparseExchange(ctx, sparse, m); err != nil {
			s.finish(t)
			t.Fatal(err)
		}
	}
	hangguard.Until(ctx, t, "every saturated mailbox served 512 more times on the new table", func() bool {
		for i, n := range s.progress() {
			if n < before[i]+512 {
				return false
			}
		}
		return true
	})
	if s.handOvers(t) == 0 {
		t.Error("no mailbox was handed over on the new table")
	}
	if _, err := s.b.Epoch(ctx); err != nil {
		s.finish(t)
		t.Fatalf("epoch after the growth: %v", err)
	}
	if _, _, err := sparseExchange(ctx, sparse, 10); err != nil {
		s.finish(t)
		t.Fatal(err)
	}
	s.finish(t)
	if err := sparse.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSparseAmongSaturated measures a sparse mailbox's round trip
// (one request at a time, submit to reply) on a grid of 2 blocks, alone
// and among 8 mailboxes kept saturated (256-deep rings kept full). One op
// is one round trip; p50-ns and p99-ns are the figures, device-p50-ns the
// device's part (request stamp to reply published). Run with
// go test -run '^$' -bench SparseAmongSaturated ./gpu/cuda/internal/ringrt/
func BenchmarkSparseAmongSaturated(b *testing.B) {
	for _, n := range []int{0, 8} {
		b.Run(fmt.Sprintf("saturated=%d", n), func(b *testing.B) {
			s := saturate(b, 2, n, 256)
			ctx, cancel := hangCtx(b)
			defer cancel()
			sparse, err := s.b.Open(s.p, Config{Threads: fairThreads})
			if err != nil {
				b.Fatal(err)
			}
			sparse.Activate()
			rtt, dev := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for m := range b.N {
				r, d, err := sparseExchange(ctx, sparse, m)
				if err != nil {
					b.Fatal(err)
				}
				rtt, dev = append(rtt, r), append(dev, d)
			}
			b.StopTimer()
			slices.Sort(rtt)
			slices.Sort(dev)
			b.ReportMetric(float64(rtt[len(rtt)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(rtt[len(rtt)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(dev[len(dev)/2].Nanoseconds()), "device-p50-ns")
			s.finish(b)
			if err := sparse.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
}
