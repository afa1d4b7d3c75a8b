// Package persistence is ringactor's state store: a key's value with a
// version, written with compare-and-set, so that state survives a crash and
// a stale writer cannot overwrite a newer one.
//
// A [Store] loads a [Record] (value, version, schema version) by [Key]
// (cluster, kind, identity), saves it against the version the writer loaded
// (a save against a version that moved is a *[ConflictError], which
// errors.Is reports as [ErrVersionConflict]; expected version 0 means "must
// not exist"), deletes it the same way, and commits a [Store.Batch] of
// operations on many keys in one transaction (group commit: one fsync for
// the batch), with one [Result] per operation.
//
// Providers: [Open] (an embedded bbolt file, for one process), [OpenPostgres]
// (a PostgreSQL table, for members that share one store), [NewMemory] (a map,
// for tests) and [OpenURL], which picks one from a URL (file:///path,
// postgres://…, mem://). docs/persistence.md describes each, what it costs,
// the record format and the limits.
package persistence

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The errors a store returns. Each is matched with errors.Is; the error
// returned names the key and wraps the cause where there is one.
var (
	// ErrNotFound is returned by Load for a key that has no record.
	ErrNotFound = errors.New("persistence: no record")
	// ErrVersionConflict is what a *ConflictError is (errors.Is): a save or
	// delete against a version that is no longer the record's.
	ErrVersionConflict = errors.New("persistence: version conflict")
	// ErrRecordTooLarge is a save whose value exceeds the store's maximum
	// record size (WithMaxRecordSize; DefaultMaxRecordSize by default), or
	// a Load of a stored record larger than it (written under a larger
	// limit): the value is not read, so a reader's allocation stays
	// bounded by its own limit.
	ErrRecordTooLarge = errors.New("persistence: record too large")
	// ErrCorruptRecord is a stored record that fails its checksum or its
	// decoding. Decoding never panics and never allocates more than the
	// stored bytes' size.
	ErrCorruptRecord = errors.New("persistence: corrupt record")
	// ErrStoreUnavailable is a store that cannot be reached or used (a
	// refused connection, a file that cannot be opened or locked, a failed
	// commit); the error wraps the cause. An operation that fails with it
	// while committing may or may not have been applied: a writer that must
	// know loads the key again (its version tells).
	ErrStoreUnavailable = errors.New("persistence: store unavailable")
	// ErrClosed is an operation on a store after its Close.
	ErrClosed = errors.New("persistence: store closed")
	// ErrInvalidKey is a key that fails Key.Validate, or a malformed
	// encoded key (ParseKey).
	ErrInvalidKey = errors.New("persistence: invalid key")
	// ErrInvalidURL is a state store URL that OpenURL cannot open: no or an
	// unknown scheme, a relative file path.
	ErrInvalidURL = errors.New("persistence: invalid state store URL")
)

// DefaultMaxRecordSize is the largest value a store accepts unless
// WithMaxRecordSize says otherwise: 1 MiB.
const DefaultMaxRecordSize = 1 << 20

// MaxKeyPart is the most bytes each of a Key's fields may have.
const MaxKeyPart = 1024

// ConflictError is a save or delete whose expected version is not the
// record's: another writer saved (or deleted) since the caller loaded.
// errors.Is(err, ErrVersionConflict) reports it.
type ConflictError struct {
	// Key is the record's key.
	Key Key
	// Expected is the version the caller said it had (0: must not exist).
	Expected uint64
	// Actual is the record's version when the operation ran (0: no record).
	Actual uint64
}

// Error says which key and which versions.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("persistence: version conflict on %s: expected version %d, record is at %d",
		e.Key, e.Expected, e.Actual)
}

// Unwrap returns ErrVersionConflict, so that errors.Is matches it.
func (e *ConflictError) Unwrap() error { return ErrVersionConflict }

// Key names a record: the cluster it belongs to, the kind, and the identity
// (a cluster identity, or a ring kernel's id). Kind and Identity must not be
// empty; Cluster may be (a process's own kernels, in no cluster). Each field
// is valid UTF-8 without NUL bytes and at most MaxKeyPart bytes.
type Key struct {
	// Cluster is the cluster's name ("" for a store not shared by a cluster).
	Cluster string
	// Kind is the identity's kind, or the kernel's kind.
	Kind string
	// Identity is the identity (or kernel id) within its kind.
	Identity string
}

// Validate reports a key that no store accepts, as ErrInvalidKey.
func (k Key) Validate() error {
	if k.Kind == "" || k.Identity == "" {
		return fmt.Errorf("%w: %q: kind and identity must not be empty", ErrInvalidKey, k.String())
	}
	for _, f := range [...]struct{ name, v string }{{"cluster", k.Cluster}, {"kind", k.Kind}, {"identity", k.Identity}} {
		switch {
		case len(f.v) > MaxKeyPart:
			return fmt.Errorf("%w: %s is %d bytes, at most %d", ErrInvalidKey, f.name, len(f.v), MaxKeyPart)
		case !utf8.ValidString(f.v):
			return fmt.Errorf("%w: %s %q is not valid UTF-8", ErrInvalidKey, f.name, f.v)
		case strings.IndexByte(f.v, 0) >= 0:
			return fmt.Errorf("%w: %s %q holds a NUL byte", ErrInvalidKey, f.name, f.v)
		}
	}
	return nil
}

// String is the key's canonical encoding, "cluster/kind/identity", each
// field percent-escaped (every byte outside A-Z a-z 0-9 and -._~:@+=, is
// written %XX, so "/" in a field is %2F). Two keys are equal exactly when
// their encodings are; ParseKey reverses it. The embedded store keys its
// records by it, so a scan in key order visits a cluster's kinds together.
func (k Key) String() string {
	var b strings.Builder
	b.Grow(len(k.Cluster) + len(k.Kind) + len(k.Identity) + 2)
	escapeTo(&b, k.Cluster)
	b.WriteByte('/')
	escapeTo(&b, k.Kind)
	b.WriteByte('/')
	escapeTo(&b, k.Identity)
	return b.String()
}

// ParseKey decodes a Key's canonical encoding (Key.String) and validates it;
// anything else is ErrInvalidKey.
func ParseKey(s string) (Key, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Key{}, fmt.Errorf("%w: %q: want cluster/kind/identity", ErrInvalidKey, s)
	}
	var fields [3]string
	for i, p := range parts {
		v, err := unescape(p)
		if err != nil {
			return Key{}, fmt.Errorf("%w: %q: %v", ErrInvalidKey, s, err)
		}
		fields[i] = v
	}
	k := Key{Cluster: fields[0], Kind: fields[1], Identity: fields[2]}
	if k.String() != s {
		return Key{}, fmt.Errorf("%w: %q is not canonical (want %q)", ErrInvalidKey, s, k.String())
	}
	return k, k.Validate()
}

func plainByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~:@+=,", c) >= 0
}

const hexDigits = "0123456789ABCDEF"

func escapeTo(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plainByte(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
}

func unescape(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 {
		return s, nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			out = append(out, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("truncated %-escape")
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("bad %%-escape %q", s[i:i+3])
		}
		out = append(out, byte(v))
		i += 2
	}
	return string(out), nil
}

// Record is a key's stored state.
type Record struct {
	// Key is the record's key.
	Key Key
	// Version is the record's version, its ETag: 1 when first saved, one
	// more on each save. A save names the version it expects.
	Version uint64
	// Schema is the schema version of Value, chosen by the writer and kept
	// as written: a reader that finds an older schema converts the value.
	Schema uint32
	// Value is the state's bytes (the caller's own encoding), owned by the
	// caller.
	Value []byte
	// Updated is when the version was saved (the store's clock).
	Updated time.Time
}

// Op is one operation of a Batch: a save of Value with Schema, or (Delete)
// a delete, of Key, against version Expected (0: the record must not exist).
type Op struct {
	// Key is the record's key.
	Key Key
	// Expected is the version the writer loaded; 0 means the record must
	// not exist.
	Expected uint64
	// Delete makes the operation a delete (Schema and Value are ignored).
	Delete bool
	// Schema is the schema version of Value.
	Schema uint32
	// Value is the bytes to save.
	Value []byte
}

// SaveOp is the Op that saves value (with schema) at key against version
// expected.
func SaveOp(key Key, expected uint64, schema uint32, value []byte) Op {
	return Op{Key: key, Expected: expected, Schema: schema, Value: value}
}

// DeleteOp is the Op that deletes key's record against version expected.
func DeleteOp(key Key, expected uint64) Op {
	return Op{Key: key, Expected: expected, Delete: true}
}

// Result is one Op's outcome in a Batch.
type Result struct {
	// Version is the record's new version after a save (0 after a delete
	// or when Err is set).
	Version uint64
	// Err is the operation's own error: a *ConflictError, ErrRecordTooLarge,
	// ErrInvalidKey or ErrCorruptRecord. nil: the operation was applied.
	Err error
}

// Store is a state store. Every method is safe for concurrent use; each
// takes a context, and a cancelled or expired context ends the call with
// the context's error (nothing applied unless the commit already ran).
//
// Versions: a record's first save (expected 0) gives it version 1, each
// save adds one. Delete forgets the version: a record created again starts
// at 1, so a writer that must stay fenced across a delete saves an empty
// value (a tombstone) instead of deleting.
type Store interface {
	// Load returns key's record, or ErrNotFound (wrapped, naming the key)
	// when it has none, ErrCorruptRecord for one that fails its checksum.
	Load(ctx context.Context, key Key) (Record, error)
	// Save writes value (with its schema version) at key if the record's
	// version is expected (0: the record must not exist), and returns the
	// new version. A moved version is a *ConflictError (ErrVersionConflict).
	Save(ctx context.Context, key Key, expected uint64, schema uint32, value []byte) (uint64, error)
	// Delete removes key's record if its version is expected; a moved
	// version is a *ConflictError. Deleting a record that does not exist
	// with expected 0 succeeds (there is nothing to delete).
	Delete(ctx context.Context, key Key, expected uint64) error
	// Batch applies ops in one transaction, in order (two ops on one key
	// see each other: the second expects the first's new version), and
	// returns one Result per op. Each op succeeds or fails on its own (a
	// conflicting op does not hold back the others: group commit of many
	// identities' saves must not let one stale writer fail the rest); the
	// ones that succeed are made durable together, with one commit. An
	// error from Batch itself (ErrStoreUnavailable, ErrClosed, a context's
	// error) means no op was applied, or for a failed commit that the
	// outcome is unknown (see ErrStoreUnavailable); its results are nil.
	Batch(ctx context.Context, ops []Op) ([]Result, error)
	// Close releases the store; later calls return ErrClosed. Close is
	// idempotent.
	Close() error
}

// Option configures a store when it is opened.
type Option func(*config)

type config struct {
	maxRecord int
	logger    *slog.Logger
	table     string
	now       func() time.Time
}

func newConfig(opts []Option) config {
	c := config{maxRecord: DefaultMaxRecordSize, logger: slog.Default(), table: DefaultTable, now: time.Now}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithMaxRecordSize sets the largest value, in bytes, that a save may write;
// larger ones are ErrRecordTooLarge. n <= 0 keeps DefaultMaxRecordSize.
func WithMaxRecordSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxRecord = n
		}
	}
}

// WithLogger sets the logger a store reports its events to (opening,
// closing, a corrupt record found); slog.Default() by default.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// DefaultTable is the PostgreSQL table a store uses unless WithTable says
// otherwise.
const DefaultTable = "ringactor_state"

// WithTable sets the PostgreSQL table name (created if missing); other
// providers ignore it. It must be a plain identifier ([a-z_][a-z0-9_]*).
func WithTable(name string) Option {
	return func(c *config) { c.table = name }
}

// checkOp validates an op before a store applies it.
func (c *config) checkOp(op Op) error {
	if err := op.Key.Validate(); err != nil {
		return err
	}
	if !op.Delete && len(op.Value) > c.maxRecord {
		return fmt.Errorf("%w: %s: %d bytes, at most %d", ErrRecordTooLarge, op.Key, len(op.Value), c.maxRecord)
	}
	return nil
}

// tooLargeStored is the ErrRecordTooLarge of a stored record over the limit.
func tooLargeStored(enc string, size int64, limit int) error {
	return fmt.Errorf("%w: stored record %s holds %d bytes, this store reads at most %d (WithMaxRecordSize)", ErrRecordTooLarge, enc, size, limit)
}

// notFound is the ErrNotFound that names key.
func notFound(key Key) error {
	return fmt.Errorf("%w: %s", ErrNotFound, key)
}

// unavailable wraps cause as ErrStoreUnavailable.
func unavailable(what string, cause error) error {
	return fmt.Errorf("%w: %s: %w", ErrStoreUnavailable, what, cause)
}

// ctxErr is ctx's error, named by the operation.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("persistence: %w", err)
	}
	return nil
}

// single runs one op through a store's Batch and returns its result.
func single(ctx context.Context, s Store, op Op) (uint64, error) {
	res, err := s.Batch(ctx, []Op{op})
	if err != nil {
		return 0, err
	}
	return res[0].Version, res[0].Err
}

var (
	_ Store = (*Memory)(nil)
	_ Store = (*Bolt)(nil)
	_ Store = (*Postgres)(nil)
)
