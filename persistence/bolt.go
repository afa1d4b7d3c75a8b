package persistence

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// boltBucket is the bucket that holds the records, keyed by Key.String.
var boltBucket = []byte("ringactor.state.v1")

// DefaultOpenTimeout is how long Open waits for another process's lock on
// the file when ctx has no deadline.
const DefaultOpenTimeout = 5 * time.Second

// Bolt is the embedded Store: one bbolt file (a B+tree with ACID
// transactions, fsync'd on every commit), for the state of one process.
// Another process cannot open the file while this one has it (a file lock).
// Each Batch is one read-write transaction, one commit, one fsync; bbolt
// runs one writer at a time, so concurrent Batches commit one after another
// (group them to have fewer).
type Bolt struct {
	cfg  config
	path string

	mu     sync.RWMutex // held for reading by each call, for writing by Close
	db     *bolt.DB
	closed bool
}

// Open opens (creating if missing, with its directory) the embedded store
// at path. It waits for another process's lock on the file until ctx's
// deadline (DefaultOpenTimeout without one); a file that cannot be
// created, opened or locked is ErrStoreUnavailable, and a file that is not
// a bbolt database (or a corrupt one) is ErrCorruptRecord.
func Open(ctx context.Context, path string, opts ...Option) (*Bolt, error) {
	cfg := newConfig(opts)
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	timeout := DefaultOpenTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(d), time.Millisecond)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, unavailable("open "+path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if err != nil {
		switch {
		case errors.Is(err, berrors.ErrTimeout):
			return nil, unavailable("open "+path, fmt.Errorf("the file is locked by another process (waited %v): %w", timeout, err))
		case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrInvalidMapping):
			return nil, fmt.Errorf("%w: %s is not a usable bbolt file: %w", ErrCorruptRecord, path, err)
		}
		return nil, unavailable("open "+path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(boltBucket)
		return err
	}); err != nil {
		_ = db.Close()
		return nil, unavailable("open "+path, err)
	}
	cfg.logger.Debug("persistence: opened embedded store", "path", path)
	return &Bolt{cfg: cfg, path: path, db: db}, nil
}

// Path returns the file's path.
func (b *Bolt) Path() string { return b.path }

// String names the store, for logs.
func (b *Bolt) String() string { return "file://" + b.path }

// Load returns key's record (see Store.Load).
func (b *Bolt) Load(ctx context.Context, key Key) (Record, error) {
	if err := ctxErr(ctx); err != nil {
		return Record{}, err
	}
	if err := key.Validate(); err != nil {
		return Record{}, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return Record{}, ErrClosed
	}
	enc := key.String()
	var rec Record
	err := b.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(boltBucket).Get([]byte(enc))
		if raw == nil {
			return notFound(key)
		}
		if err := checkStoredSize(enc, raw, b.cfg.maxRecord); err != nil {
			return err
		}
		var err error
		rec, err = decodeRecord(key, enc, raw, true)
		return err
	})
	if errors.Is(err, ErrCorruptRecord) {
		b.cfg.logger.Warn("persistence: corrupt record", "store", b.String(), "key", enc, "err", err)
	}
	return rec, err
}

// Save writes key's record against version expected (see Store.Save).
func (b *Bolt) Save(ctx context.Context, key Key, expected uint64, schema uint32, value []byte) (uint64, error) {
	return single(ctx, b, SaveOp(key, expected, schema, value))
}

// Delete removes key's record against version expected (see Store.Delete).
func (b *Bolt) Delete(ctx context.Context, key Key, expected uint64) error {
	_, err := single(ctx, b, DeleteOp(key, expected))
	return err
}

// Batch applies ops in one read-write transaction, one commit (see
// Store.Batch). A cancelled ctx is checked before the transaction starts
// and before it commits.
func (b *Bolt) Batch(ctx context.Context, ops []Op) ([]Result, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, ErrClosed
	}
	var res []Result
	err := b.db.Update(func(tx *bolt.Tx) error {
		var err error
		res, err = applyOps(&b.cfg, boltTx{tx.Bucket(boltBucket)}, ops, b.cfg.now())
		if err != nil {
			return unavailable("commit "+b.path, err)
		}
		return ctxErr(ctx)
	})
	if err != nil {
		if errors.Is(err, ErrStoreUnavailable) || ctx.Err() != nil {
			return nil, err
		}
		return nil, unavailable("commit "+b.path, err)
	}
	return res, nil
}

// Close closes the file (waiting for calls in flight); later calls return
// ErrClosed.
func (b *Bolt) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if err := b.db.Close(); err != nil {
		return unavailable("close "+b.path, err)
	}
	return nil
}

type boltTx struct{ b *bolt.Bucket }

func (t boltTx) get(enc string) []byte { return t.b.Get([]byte(enc)) }

func (t boltTx) put(enc string, v []byte) error { return t.b.Put([]byte(enc), v) }

func (t boltTx) del(enc string) error { return t.b.Delete([]byte(enc)) }
