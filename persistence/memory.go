package persistence

import (
	"context"
	"fmt"
	"sync"
)

// Memory is an in-memory Store for tests: a map guarded by a mutex, holding
// each record in the same stored form (and checksum) as the embedded store,
// so that it behaves as the durable providers do (versions, conflicts,
// limits, corrupt records) without a disk. Its state lives as long as the
// value: tests that "restart" a kernel or a member hand the same *Memory to
// the new one. It also injects faults (Fail, SetCommitHook, Corrupt) and
// counts its transactions (Stats), for the tests of what is built on it.
type Memory struct {
	cfg config
	*memShared
	closed bool // guarded by mu
}

// memShared is what the handles of one in-memory store share.
type memShared struct {
	hookMu sync.Mutex
	hook   func(ctx context.Context, ops []Op) error

	mu    sync.Mutex
	data  map[string][]byte
	fail  error
	stats MemoryStats
}

// MemoryStats counts a Memory store's calls.
type MemoryStats struct {
	// Loads is the number of Load calls that reached the map.
	Loads uint64
	// Commits is the number of transactions (a Batch, or one Save or
	// Delete) that were applied.
	Commits uint64
	// Ops is the number of operations in those transactions, applied or
	// refused on their own (a conflict).
	Ops uint64
	// MaxBatch is the most operations one transaction held.
	MaxBatch int
}

// NewMemory returns an empty in-memory store. Of the options it uses
// WithMaxRecordSize.
func NewMemory(opts ...Option) *Memory {
	return &Memory{cfg: newConfig(opts), memShared: &memShared{data: make(map[string][]byte)}}
}

// Reopen returns another handle on the same records, faults, hook and
// counters, open whatever m's state: what a restarted member's OpenURL of
// the same mem:// name would get. Closing one handle leaves the others open.
func (m *Memory) Reopen() *Memory {
	return &Memory{cfg: m.cfg, memShared: m.memShared}
}

// Fail makes every later call fail with ErrStoreUnavailable wrapping err,
// as an unreachable store would, until Fail(nil). Nothing is applied while
// it fails.
func (m *Memory) Fail(err error) {
	m.mu.Lock()
	m.fail = err
	m.mu.Unlock()
}

// SetCommitHook sets a function called with each transaction's ops before
// they are applied (outside the store's lock, so it may block: a test holds
// a commit back to see that nothing waits on it is released early). A
// non-nil error fails the transaction with ErrStoreUnavailable wrapping it,
// nothing applied. nil removes the hook.
func (m *Memory) SetCommitHook(hook func(ctx context.Context, ops []Op) error) {
	m.hookMu.Lock()
	m.hook = hook
	m.hookMu.Unlock()
}

// Corrupt flips a byte of key's stored record, so that the next Load of it
// is ErrCorruptRecord; it reports whether key had a record.
func (m *Memory) Corrupt(key Key) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	raw, ok := m.data[key.String()]
	if !ok {
		return false
	}
	raw = append([]byte(nil), raw...)
	raw[len(raw)/2] ^= 0x5a
	m.data[key.String()] = raw
	return true
}

// Stats returns the store's counters so far.
func (m *Memory) Stats() MemoryStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// Len returns the number of records held.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.data)
}

// usable is nil when the store may be used now; m.mu is held.
func (m *Memory) usable() error {
	if m.closed {
		return ErrClosed
	}
	if m.fail != nil {
		return unavailable("memory store", m.fail)
	}
	return nil
}

// Load returns key's record (see Store.Load).
func (m *Memory) Load(ctx context.Context, key Key) (Record, error) {
	if err := ctxErr(ctx); err != nil {
		return Record{}, err
	}
	if err := key.Validate(); err != nil {
		return Record{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(); err != nil {
		return Record{}, err
	}
	m.stats.Loads++
	enc := key.String()
	raw, ok := m.data[enc]
	if !ok {
		return Record{}, notFound(key)
	}
	if err := checkStoredSize(enc, raw, m.cfg.maxRecord); err != nil {
		return Record{}, err
	}
	return decodeRecord(key, enc, raw, true)
}

// Save writes key's record against version expected (see Store.Save).
func (m *Memory) Save(ctx context.Context, key Key, expected uint64, schema uint32, value []byte) (uint64, error) {
	return single(ctx, m, SaveOp(key, expected, schema, value))
}

// Delete removes key's record against version expected (see Store.Delete).
func (m *Memory) Delete(ctx context.Context, key Key, expected uint64) error {
	_, err := single(ctx, m, DeleteOp(key, expected))
	return err
}

// Batch applies ops in one transaction (see Store.Batch).
func (m *Memory) Batch(ctx context.Context, ops []Op) ([]Result, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	m.hookMu.Lock()
	hook := m.hook
	m.hookMu.Unlock()
	if hook != nil {
		if err := hook(ctx, ops); err != nil {
			return nil, unavailable("memory store commit", err)
		}
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(); err != nil {
		return nil, err
	}
	tx := &memTx{m: m, writes: make(map[string][]byte)}
	res, err := applyOps(&m.cfg, tx, ops, m.cfg.now())
	if err != nil {
		return nil, unavailable("memory store commit", err)
	}
	for enc, b := range tx.writes {
		if b == nil {
			delete(m.data, enc)
		} else {
			m.data[enc] = b
		}
	}
	m.stats.Commits++
	m.stats.Ops += uint64(len(ops))
	m.stats.MaxBatch = max(m.stats.MaxBatch, len(ops))
	return res, nil
}

// Close makes later calls on this handle return ErrClosed; the records
// stay, for the store's other handles (Reopen).
func (m *Memory) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return nil
}

// String names the store, for logs.
func (m *Memory) String() string { return fmt.Sprintf("mem:// (%d records)", m.Len()) }

// memTx stages a batch's writes so that a failed batch changes nothing.
type memTx struct {
	m      *Memory
	writes map[string][]byte // nil value: deleted
}

func (t *memTx) get(enc string) []byte {
	if b, ok := t.writes[enc]; ok {
		return b
	}
	return t.m.data[enc]
}

func (t *memTx) put(enc string, b []byte) error {
	t.writes[enc] = b
	return nil
}

func (t *memTx) del(enc string) error {
	t.writes[enc] = nil
	return nil
}
