package ringrt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/gpu/ring"
)

// The device epoch: the few driver calls that synchronise the device and
// cannot be avoided (loading a module while rings run, growing the pinned
// arena, the fallback allocator, unloading and closing) are made with no
// persistent kernel running. The epoch parks every live ring kernel —
// TerminateNow, wait for its ack, wait for its launch to retire — keeping
// its memory, indices and counters; makes the call; then relaunches each
// ring on the same memory and stream. The loop resumes from its rings'
// indices (ring_loop.cuh), so no message is lost, duplicated or
// reordered: a parked ring's clients keep queueing into its input ring on
// the host side and only see added latency. An owner's Terminate during
// the epoch is remembered and applied at the relaunch.
//
// Epochs never starve the rings, however often they are asked for:
//   - before it parks a ring, an epoch waits until the ring has handled
//     every message queued before its last relaunch (settle), as far as
//     the ring can — not while its gate is closed or its output ring is
//     full — so each message is handled within two epochs;
//   - callers waiting for an epoch share one (devcore.Pace): the epoch
//     that parks next serves every DeviceEpoch request made before it;
//   - an epoch parks no sooner than max(WithEpochSpacing, the previous
//     epoch's duration) after the previous one ended, so under a
//     continuous storm the rings run at least half the time.

// EpochStats says what the device epochs of a device cost.
type EpochStats = devcore.EpochStats

// The device's part of the protocol is a devcore.Epochs (the embedded
// Epochs of devcore.Device): the live rings, each registered as a
// *parkedRing, and the epoch itself.

// ringPark is a ring kernel's part of the protocol: how to relaunch it and
// whether it is parked. mu orders the owner's Terminate and Wait with the
// epoch's park and relaunch.
type ringPark struct {
	mu        sync.Mutex
	id        uint64
	fn        driverapi.Function
	threads   uint32
	blocks    uint32 // the grid's blocks (1 for a kernel's own loop)
	resumed   func() // called after a relaunch (a grid rings its mailboxes again)
	args      []uint64
	smem      uint32 // dynamic shared memory of the launch
	parked    bool
	want      ring.TerminateMode // the owner's terminate request (0: none)
	launchErr error              // a relaunch that failed
	backlog   uint64             // the input ring's tail at the last relaunch (device thread only)
	// abandoned: an epoch gave up waiting for the ring's ack and handed
	// its terminate word back, but the loop may have read TerminateNow
	// already; its ack then means the loop exited for that park, and the
	// host relaunches it (revive, or the next epoch's park).
	abandoned atomic.Bool
}

// terminate records the owner's request and, unless the ring is parked,
// stores it in the control block (the relaunch stores it otherwise).
func (k *Kernel) terminate(mode ring.TerminateMode) {
	k.park.mu.Lock()
	defer k.park.mu.Unlock()
	k.park.want = mode
	if !k.park.parked && k.cb != nil {
		k.cb.Terminate.Store(uint64(mode))
	}
}

// ack returns the kernel's terminated ack as its owner sees it: 0 while
// the ring is parked (the ack then belongs to the epoch), and a failed
// relaunch's error.
func (k *Kernel) ack() (uint64, error) {
	k.park.mu.Lock()
	defer k.park.mu.Unlock()
	if k.park.parked || k.cb == nil {
		return 0, nil
	}
	ack := k.cb.TerminatedAck.Load()
	if ack == ring.Terminated && k.park.abandoned.Load() {
		if k.park.want != ring.TerminateNow {
			return 0, nil // an abandoned park's ack: revive relaunches the ring
		}
		k.park.abandoned.Store(false) // stopped as its owner asked either way
	}
	return ack, k.park.launchErr
}

// ghostAck reports (under park.mu) whether the ring's loop exited for an
// abandoned park while its owner wants it running (or draining).
func (k *Kernel) ghostAck() bool {
	return k.park.abandoned.Load() && k.cb != nil && k.park.want != ring.TerminateNow &&
		k.cb.TerminatedAck.Load() == ring.Terminated
}

// revive relaunches a ring whose loop exited for an abandoned park
// (ghostAck), from its owner's side (poll, Wait). It costs one atomic
// load unless a park was abandoned.
func (k *Kernel) revive() {
	if !k.park.abandoned.Load() {
		return
	}
	k.park.mu.Lock()
	ghost := !k.park.parked && k.ghostAck()
	k.park.mu.Unlock()
	if !ghost {
		return
	}
	_ = k.d.Do(func() error { // a failed relaunch is the owner's Wait's error
		k.park.mu.Lock()
		defer k.park.mu.Unlock()
		if k.park.parked || !k.ghostAck() {
			return nil // an epoch or another poll got there first
		}
		k.park.abandoned.Store(false)
		if err := k.d.API.StreamSynchronize(k.stream); err != nil {
			return k.relaunchFailed(err)
		}
		return k.relaunch()
	})
}

// Epoch runs an empty device epoch: it parks every live ring kernel
// of the device and relaunches it, and returns how long the rings were
// parked (0 without live rings). It is what every unavoidable
// synchronising call costs the rings; the H100 runbook in README.md
// measures it with this. Concurrent calls share one epoch (the one that
// parks next serves every call made before it), and an epoch waits for
// the spacing since the previous one (WithEpochSpacing) and for each
// ring's backlog first; ctx bounds those waits and the park.
func (rt *Runtime) Epoch(ctx context.Context) (time.Duration, error) {
	d := rt.d
	for {
		req := d.Epochs.Pace.Request()
		// Wait for the spacing off the device's thread, which one-shot
		// work needs meanwhile; the epoch checks it again.
		err := d.Epochs.Pace.Wait(ctx, d.Epochs.Spacing)
		if err == nil {
			err = d.Do(func() error {
				if req.Finished() {
					return nil // an epoch that parked meanwhile served it
				}
				return d.Epoch(ctx, "DeviceEpoch", nil)
			})
		}
		if err != nil && d.Epochs.Pace.Withdraw(req) {
			return 0, devcore.DeviceErr(d.Ordinal, err)
		}
		<-req.Done()
		if took, bounced, err := req.Outcome(); !bounced {
			return took, devcore.DeviceErr(d.Ordinal, err)
		}
		if ctx.Err() != nil {
			return 0, devcore.DeviceErr(d.Ordinal, errors.Join(err, ctx.Err()))
		}
	}
}

// EpochStats returns what the device's epochs cost so far.
func (rt *Runtime) EpochStats() EpochStats { return rt.d.Epochs.Stats() }

// parkedRing is a ring kernel as the device epoch sees it
// (devcore.Parkable); its methods run inside Do.
type parkedRing Kernel

// Settled reports whether the ring has handled what was queued before its
// last relaunch, or cannot go on now: it has stopped or been asked to stop
// now, its gate is closed (and it does not drain), or its output ring is
// full (its replies wait for the host).
func (p *parkedRing) Settled() bool {
	k := (*Kernel)(p)
	if k.cb.TerminatedAck.Load() != 0 {
		return true // stopped (an abandoned park's ack: ParkAll relaunches it)
	}
	if k.serves != nil {
		return k.serves.settled() // a grid: each of its mailboxes
	}
	if k.in == nil || k.in.Header().Head.Load() >= k.park.backlog {
		return true
	}
	k.park.mu.Lock()
	want := k.park.want
	k.park.mu.Unlock()
	if want == ring.TerminateNow || (!k.cb.IsOpen() && want != ring.TerminateDrain) {
		return true
	}
	out := k.out.Header()
	return out.Tail.Load()-out.Head.Load() >= uint64(k.out.Cap())
}

// Terminate parks the ring: TerminateNow, unless its loop already
// acknowledged a termination of its own.
func (p *parkedRing) Terminate() bool {
	k := (*Kernel)(p)
	k.park.mu.Lock()
	defer k.park.mu.Unlock()
	if k.cb.TerminatedAck.Load() != 0 && !k.ghostAck() {
		return false
	}
	// A ring whose loop exited for an abandoned park is parked already:
	// the epoch retires and relaunches it.
	k.park.parked = true
	k.cb.Terminate.Store(uint64(ring.TerminateNow))
	return true
}

// Acked reports whether the loop acknowledged; a faulted grid never
// will: it is gone (and marked acknowledged).
func (p *parkedRing) Acked() bool {
	k := (*Kernel)(p)
	return k.cb.TerminatedAck.Load() != 0 || (k.serves != nil && gridFaulted(k))
}

// Retire waits for the launch whose loop exited.
func (p *parkedRing) Retire() error { return p.d.API.StreamSynchronize(p.stream) }

// Stream is the stream the ring's launch runs on (the simulated device's
// tests find a ring's hardware queue by it through the device's live set).
func (p *parkedRing) Stream() driverapi.Stream { return p.stream }

// Unpark clears the parked mark (the device closes: no relaunch).
func (p *parkedRing) Unpark() {
	p.park.mu.Lock()
	p.park.parked = false
	p.park.mu.Unlock()
}

// Stuck describes the ring for an epoch that gave up waiting.
func (p *parkedRing) Stuck(settling bool) string {
	k := (*Kernel)(p)
	if settling {
		return fmt.Sprintf("ring %d did not handle the messages queued before its relaunch (input at %d of %d, processed %d)",
			k.park.id, k.in.Header().Head.Load(), k.park.backlog, k.cb.Processed.Load())
	}
	return fmt.Sprintf("ring %d (processed %d)", k.park.id, k.cb.Processed.Load())
}

// Resume relaunches the parked ring on its memory and stream, with the
// terminate request its owner made meanwhile. A ring whose owner asked
// for TerminateNow stays stopped; a ring that did not acknowledge its park
// gets its owner's request back.
func (p *parkedRing) Resume() error {
	k := (*Kernel)(p)
	k.park.mu.Lock()
	defer k.park.mu.Unlock()
	k.park.parked = false
	want := k.park.want
	if k.cb.TerminatedAck.Load() == 0 {
		// Never parked (the epoch gave up waiting): hand the terminate
		// word back. The loop may have read TerminateNow already and
		// ack later: revive or the next epoch relaunches it then.
		k.cb.Terminate.Store(uint64(want))
		k.park.abandoned.Store(true)
		return nil
	}
	k.park.abandoned.Store(false)
	if want == ring.TerminateNow {
		return nil // stopped as its owner asked; its Wait releases it
	}
	return k.relaunch()
}

// relaunch launches the ring's loop again on its memory and stream with
// its owner's terminate request (park.mu held, inside Do).
func (k *Kernel) relaunch() error {
	k.cb.Terminate.Store(uint64(k.park.want))
	k.cb.TerminatedAck.Store(0)
	if k.in != nil {
		k.park.backlog = k.in.Header().Tail.Load() // settle waits for these before the next park
	}
	err := k.d.API.LaunchKernel(k.park.fn, driverapi.Dim3{X: max(1, k.park.blocks)}, driverapi.Dim3{X: k.park.threads}, k.park.smem, k.stream, k.park.args...)
	if err != nil {
		return k.relaunchFailed(err)
	}
	if k.park.resumed != nil {
		k.park.resumed()
	}
	return nil
}

// relaunchFailed records a failed relaunch (park.mu held): the ring is
// gone, its owner's Wait reports why.
func (k *Kernel) relaunchFailed(err error) error {
	k.park.launchErr = fmt.Errorf("cuda: relaunching ring %d after a device epoch: %w", k.park.id, err)
	k.cb.TerminatedAck.Store(ring.Terminated)
	return k.park.launchErr
}

// stopRings stops every live ring for good before the device closes
// (inside Do; the device's BeforeClose): TerminateNow, wait for the acks, then each ring keeps its
// unread replies for TryPoll and gives its memory and stream back. Its
// owner's Wait then returns at once.
func (rt *Runtime) stopRings() error {
	d := rt.d
	if d.Epochs.Len() == 0 {
		return nil
	}
	for p := range d.Epochs.Live() {
		(*Kernel)(p.(*parkedRing)).terminate(ring.TerminateNow)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.Epochs.Timeout())
	defer cancel()
	parked, err := d.Epochs.ParkAll(ctx)
	errs := []error{err}
	for _, p := range parked {
		p.Unpark()
	}
	for p := range d.Epochs.Live() { // release removes rings from the set: as a range over the map
		k := (*Kernel)(p.(*parkedRing))
		if k.cb.TerminatedAck.Load() == 0 {
			continue // still running: its memory must stay (leaked)
		}
		k.keepReplies()
		errs = append(errs, k.release())
	}
	return errors.Join(errs...)
}

// addLive registers a launched ring with its device's epochs (inside Do).
func (k *Kernel) addLive() {
	k.park.id = k.d.Epochs.Add((*parkedRing)(k))
}

// keepReplies copies the replies still in the output ring out of its
// memory, for TryPoll after the release, and marks the ring waited.
func (k *Kernel) keepReplies() {
	if k.waited {
		return
	}
	k.waited = true
	for k.out != nil { // a grid's own launch has no rings
		h, p, ok := k.tryPoll()
		if !ok {
			return
		}
		k.left = append(k.left, ringReply{h, p})
	}
}
