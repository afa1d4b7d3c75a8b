package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/ringactor/ringactor/persistence"
)

// Persistent ring kernels: a kernel whose State the runtime keeps on a
// persistence.Store (docs/ring-kernels.md, "Persistent kernels").

// StateHandler handles one message of a stateful kernel (NewStatefulKernel):
// it reads and changes *state, the kernel's State, and returns the reply. It
// runs on the kernel's loop, one message at a time, so it needs no lock.
type StateHandler[S, Req, Resp any] func(ctx context.Context, state *S, req Req) (Resp, error)

// The errors of a persistent kernel's store. Each matches the
// persistence error it wraps too (errors.Is).
var (
	// ErrStateConflict: the kernel's record was written by another writer
	// since the kernel loaded or saved it (it wraps
	// persistence.ErrVersionConflict). The kernel stops: the messages of
	// the batch whose save was refused, and every message queued behind
	// it, get this error; nothing they changed is applied.
	ErrStateConflict = fmt.Errorf("ringactor: kernel state written by another writer: %w", persistence.ErrVersionConflict)
	// ErrStateUnavailable: the kernel's store cannot be reached or used
	// (it wraps persistence.ErrStoreUnavailable). At launch, Launch fails
	// with it; while the kernel runs, the messages of a write-through
	// batch whose save failed get it (none is acknowledged) and the kernel
	// restores its State from the store before it handles another message.
	ErrStateUnavailable = fmt.Errorf("ringactor: kernel state store unavailable: %w", persistence.ErrStoreUnavailable)
	// ErrStateCorrupt: the kernel's stored State cannot be read back (a
	// record failing its checksum, a schema other than StateSchema, bytes
	// that do not decode as the State type) or the State cannot be
	// encoded (it wraps persistence.ErrCorruptRecord). Launch fails with
	// it: the kernel does not start from a State it could not read.
	ErrStateCorrupt = fmt.Errorf("ringactor: kernel state unreadable: %w", persistence.ErrCorruptRecord)
	// ErrStateTooLarge: the kernel's State is larger than its store's
	// record limit (it wraps persistence.ErrRecordTooLarge): at launch a
	// stored record over the limit; while it runs a State that encodes
	// larger, whose batch then fails as an unavailable store's does.
	ErrStateTooLarge = fmt.Errorf("ringactor: kernel state too large: %w", persistence.ErrRecordTooLarge)
)

// StateSchema is the schema version a persistent kernel writes its State
// records with (the State msgpack-encoded) and the only one it reads.
const StateSchema uint32 = 1

// StateKind is the Kind of a persistent kernel's record key when
// WithStateStore's key leaves it empty.
const StateKind = "ringactor.kernel"

// StatePolicy is when a persistent kernel saves its State: WriteThrough or
// WriteBehind.
type StatePolicy struct {
	behind   bool
	messages int
	delay    time.Duration
}

// WriteThrough is the policy under which a reply leaves only after the
// State change it reflects is durable. The loop handles a batch of messages
// (those queued, at most 64), saves the State once, and then releases the
// batch's replies: one store commit per batch (group commit), not per
// message. A crash loses nothing acknowledged.
func WriteThrough() StatePolicy { return StatePolicy{} }

// WriteBehind is the policy under which replies leave at once and the State
// is saved at a batch boundary (a quiet point) once maxMessages messages
// have changed it since the last save, or maxDelay after the first of them,
// whichever comes first, and when the kernel terminates. A crash (or a
// handler panic, which restarts the kernel from its last saved State) loses
// at most the last maxMessages acknowledged messages, or maxDelay of them
// while the store is reachable. maxMessages must be ≥ 1 and maxDelay > 0
// (ErrInvalidKernel at launch).
func WriteBehind(maxMessages int, maxDelay time.Duration) StatePolicy {
	return StatePolicy{behind: true, messages: maxMessages, delay: maxDelay}
}

// String names the policy.
func (p StatePolicy) String() string {
	if !p.behind {
		return "write-through"
	}
	return fmt.Sprintf("write-behind(%d messages, %s)", p.messages, p.delay)
}

// stateStore is what WithStateStore configures.
type stateStore struct {
	store  persistence.Store
	key    persistence.Key
	policy StatePolicy
}

// WithStateStore keeps a stateful kernel's State (NewStatefulKernel) on
// store under key, saved per policy: on launch and after every supervisor
// restart the kernel restores the last durable State instead of a fresh
// one. An empty key.Kind is StateKind, an empty key.Identity the kernel's
// id. A kernel without a State (NewKernel), a nil store, an invalid key or
// policy are refused at launch with ErrInvalidKernel.
func WithStateStore(store persistence.Store, key persistence.Key, policy StatePolicy) KernelOption {
	return func(o *kernelOptions) { o.store = &stateStore{store: store, key: key, policy: policy} }
}

// NewStatefulKernel declares a ring kernel with a State of type S: each
// message is handled by handle with a pointer to it. newState makes the
// State of a kernel that has none yet (nil: S's zero value). Without
// WithStateStore the State is fresh (newState) at every (re)start, like a
// NewKernel factory's; with it the kernel restores the State from its store
// and saves it per its StatePolicy. S must be msgpack-encodable
// (github.com/vmihailenco/msgpack/v5: exported fields, or a type with its
// own EncodeMsgpack/DecodeMsgpack); a restored State is its record decoded
// into a zero S. A nil handle is refused with ErrInvalidKernel.
func NewStatefulKernel[S, Req, Resp any](id string, newState func() S, handle StateHandler[S, Req, Resp], opts ...KernelOption) *KernelDef[Req, Resp] {
	d := NewKernel[Req, Resp](id, nil, opts...)
	if handle != nil {
		d.newBody = func() stateBody[Req, Resp] { return newTypedState(newState, handle) }
	}
	return d
}

// StateStats are a persistent kernel's store counters (Kernel.StateStats).
type StateStats struct {
	// Policy is the kernel's StatePolicy ("" without a store).
	Policy string
	// Version is the version of the kernel's record it holds (0: none
	// saved or loaded yet).
	Version uint64
	// Saves is the number of saves the store accepted.
	Saves uint64
	// Messages is the number of messages whose State changes those saves
	// made durable.
	Messages uint64
	// MaxBatch is the most messages one save made durable.
	MaxBatch uint64
	// Restores is the number of times the kernel loaded its State.
	Restores uint64
	// Failures is the number of loads and saves that failed.
	Failures uint64
}

// StateStats returns the kernel's store counters; the zero StateStats for a
// kernel without a store.
func (h *Kernel[Req, Resp]) StateStats() StateStats {
	if h.k.persist == nil {
		return StateStats{}
	}
	return h.k.persist.snapshot()
}
