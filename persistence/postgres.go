package persistence

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"regexp"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is the Store for members that share one store: one PostgreSQL
// table (DefaultTable unless WithTable), created if missing, one row a
// record:
//
//	cluster text, kind text, identity text   -- the key (primary key)
//	version bigint                           -- the ETag: 1, 2, …
//	schema_version bigint                    -- the value's schema version
//	value bytea                              -- the state's bytes
//	checksum bigint                          -- CRC-32C of key, version, schema, value
//	updated_at timestamptz                   -- the server's clock at the save
//
// A save is `UPDATE … WHERE version = $expected` (or an INSERT … ON
// CONFLICT DO NOTHING for expected 0): under PostgreSQL's row locks two
// writers racing on one version cannot both succeed. A Batch is one
// transaction, its statements pipelined in one round trip (pgx.Batch), one
// commit. Durability is the server's (synchronous_commit, fsync).
type Postgres struct {
	cfg   config
	table string
	pool  *pgxpool.Pool
	dsn   string // for logs: without the password

	mu     sync.RWMutex // held for reading by each call, for writing by Close
	closed bool

	sqlLoad, sqlInsert, sqlUpdate, sqlDelete, sqlLock string
}

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// OpenPostgres connects to the PostgreSQL server dsn names (a postgres:// URL
// or a key=value string, as pgx takes it), creates the table if missing, and
// returns the store. A server that cannot be reached before ctx ends is
// ErrStoreUnavailable wrapping the cause.
func OpenPostgres(ctx context.Context, dsn string, opts ...Option) (*Postgres, error) {
	cfg := newConfig(opts)
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if !identRE.MatchString(cfg.table) {
		return nil, fmt.Errorf("%w: table name %q: want [a-z_][a-z0-9_]*", ErrInvalidURL, cfg.table)
	}
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	if pc.ConnConfig.ConnectTimeout == 0 {
		// Without connect_timeout pgx waits on a server that accepts and
		// never answers (or a dropped SYN) for as long as ctx allows.
		pc.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	if pc.ConnConfig.MaxProtocolMessageBodyLen == 0 {
		// A bound on what one message from the server may make pgx
		// allocate: a row holds at most one value (Load refuses larger
		// ones on the server's side), in hex when sent as text.
		pc.ConnConfig.MaxProtocolMessageBodyLen = 2*cfg.maxRecord + 1<<16
	}
	safe := fmt.Sprintf("postgres://%s@%s:%d/%s", pc.ConnConfig.User, pc.ConnConfig.Host, pc.ConnConfig.Port, pc.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, unavailable(safe, err)
	}
	p := &Postgres{cfg: cfg, table: cfg.table, pool: pool, dsn: safe}
	t := cfg.table
	// The value only if it is within the maximum record size: a larger
	// one (written with a larger limit, or by hand) is not fetched.
	p.sqlLoad = `SELECT version, schema_version, CASE WHEN octet_length(value) <= $4 THEN value END, octet_length(value), checksum, updated_at FROM ` + t + ` WHERE cluster = $1 AND kind = $2 AND identity = $3`
	// ON CONFLICT … DO UPDATE … WHERE false: an existing row is locked
	// (as FOR UPDATE would) but left as it is, and no row is returned.
	p.sqlInsert = `INSERT INTO ` + t + ` AS r (cluster, kind, identity, version, schema_version, value, checksum, updated_at) VALUES ($1, $2, $3, 1, $4, $5, $6, now()) ` +
		`ON CONFLICT (cluster, kind, identity) DO UPDATE SET version = r.version WHERE false RETURNING version`
	p.sqlUpdate = `UPDATE ` + t + ` SET version = version + 1, schema_version = $5, value = $6, checksum = $7, updated_at = now() WHERE cluster = $1 AND kind = $2 AND identity = $3 AND version = $4 RETURNING version`
	p.sqlDelete = `DELETE FROM ` + t + ` WHERE cluster = $1 AND kind = $2 AND identity = $3 AND version = $4 RETURNING version`
	p.sqlLock = `SELECT version FROM ` + t + ` WHERE cluster = $1 AND kind = $2 AND identity = $3 FOR UPDATE`
	if err := p.createTable(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	cfg.logger.Debug("persistence: opened PostgreSQL store", "dsn", safe, "table", t)
	return p, nil
}

// DefaultConnectTimeout bounds each connection attempt of a PostgreSQL
// store (DNS, TCP, TLS, authentication) when its DSN sets no
// connect_timeout, so that an unreachable server is ErrStoreUnavailable
// rather than a call that waits as long as its context allows.
const DefaultConnectTimeout = 10 * time.Second

// createTable creates the table if missing, under an advisory lock so that
// members starting together do not race on the catalog.
func (p *Postgres) createTable(ctx context.Context) error {
	h := fnv.New64a()
	h.Write([]byte("ringactor.persistence." + p.table))
	lock := int64(h.Sum64())
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+p.table+` (
	cluster        text        NOT NULL,
	kind           text        NOT NULL,
	identity       text        NOT NULL,
	version        bigint      NOT NULL CHECK (version > 0),
	schema_version bigint      NOT NULL,
	value          bytea       NOT NULL,
	checksum       bigint      NOT NULL,
	updated_at     timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (cluster, kind, identity)
)`)
		return err
	})
	if err != nil {
		return p.fail(ctx, "create table "+p.table, err)
	}
	return nil
}

// fail maps a pgx error: ctx's error if ctx ended, else ErrStoreUnavailable.
func (p *Postgres) fail(ctx context.Context, what string, err error) error {
	if cerr := ctxErr(ctx); cerr != nil {
		return cerr
	}
	return unavailable(p.dsn+": "+what, err)
}

// String names the store, for logs (no password).
func (p *Postgres) String() string { return p.dsn + " table " + p.table }

// Pool returns the connection pool (for a test that needs to reach the
// table directly).
func (p *Postgres) Pool() *pgxpool.Pool { return p.pool }

// Table returns the table's name.
func (p *Postgres) Table() string { return p.table }

// pgChecksum is the checksum column of a row.
func pgChecksum(enc string, version uint64, schema uint32, value []byte) int64 {
	var hdr [16]byte
	binary.BigEndian.PutUint64(hdr[0:], version)
	binary.BigEndian.PutUint32(hdr[8:], schema)
	binary.BigEndian.PutUint32(hdr[12:], uint32(len(value)))
	c := crc32.Checksum([]byte(enc), castagnoli)
	c = crc32.Update(c, castagnoli, []byte{0})
	c = crc32.Update(c, castagnoli, hdr[:])
	return int64(crc32.Update(c, castagnoli, value))
}

// Load returns key's record (see Store.Load).
func (p *Postgres) Load(ctx context.Context, key Key) (Record, error) {
	if err := ctxErr(ctx); err != nil {
		return Record{}, err
	}
	if err := key.Validate(); err != nil {
		return Record{}, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return Record{}, ErrClosed
	}
	var (
		version, schema, size, sum int64
		rec                        = Record{Key: key}
	)
	err := p.pool.QueryRow(ctx, p.sqlLoad, key.Cluster, key.Kind, key.Identity, p.cfg.maxRecord).Scan(&version, &schema, &rec.Value, &size, &sum, &rec.Updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return Record{}, notFound(key)
	}
	if err != nil {
		return Record{}, p.fail(ctx, "load "+key.String(), err)
	}
	enc := key.String()
	if size > int64(p.cfg.maxRecord) {
		return Record{}, tooLargeStored(enc, size, p.cfg.maxRecord)
	}
	if rec.Value == nil {
		rec.Value = []byte{}
	}
	if version <= 0 || schema < 0 || schema > 1<<32-1 {
		return Record{}, p.corrupt(enc, fmt.Sprintf("version %d, schema %d", version, schema))
	}
	rec.Version, rec.Schema = uint64(version), uint32(schema)
	if got := pgChecksum(enc, rec.Version, rec.Schema, rec.Value); got != sum {
		return Record{}, p.corrupt(enc, fmt.Sprintf("checksum %08x, stored %08x", got, sum))
	}
	return rec, nil
}

func (p *Postgres) corrupt(enc, why string) error {
	err := fmt.Errorf("%w: %s: %s", ErrCorruptRecord, enc, why)
	p.cfg.logger.Warn("persistence: corrupt record", "store", p.String(), "key", enc, "err", err)
	return err
}

// Save writes key's record against version expected (see Store.Save).
func (p *Postgres) Save(ctx context.Context, key Key, expected uint64, schema uint32, value []byte) (uint64, error) {
	return single(ctx, p, SaveOp(key, expected, schema, value))
}

// Delete removes key's record against version expected (see Store.Delete).
func (p *Postgres) Delete(ctx context.Context, key Key, expected uint64) error {
	_, err := single(ctx, p, DeleteOp(key, expected))
	return err
}

// Batch applies ops in one transaction (see Store.Batch), its statements
// pipelined in one round trip, then one commit.
//
// Each op's statements lock its row, so that a conflict's actual version is
// the row's version when the op ran, not after later ops of the batch (or
// another writer) moved it: a save or delete against version n first reads
// the row with SELECT … FOR UPDATE, then writes WHERE version = n (the row
// cannot move in between); a save against 0 is an INSERT whose ON CONFLICT
// clause locks an existing row without changing it, then the same SELECT
// reads the version it found. A deadlock with another transaction (rows
// locked in another order) rolls back with nothing applied; Batch then runs
// the whole transaction again, up to pgDeadlockRetries times.
func (p *Postgres) Batch(ctx context.Context, ops []Op) ([]Result, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return nil, ErrClosed
	}
	res := make([]Result, len(ops))
	b := &pgx.Batch{}
	sent := make([]int, 0, len(ops)) // index in ops of each op that has statements queued
	for i, op := range ops {
		if err := p.cfg.checkOp(op); err != nil {
			res[i].Err = err
			continue
		}
		k := op.Key
		if int64(op.Expected) < 0 {
			res[i].Err = &ConflictError{Key: k, Expected: op.Expected}
			continue
		}
		enc := k.String()
		switch {
		case op.Delete && op.Expected == 0:
			b.Queue(p.sqlLock, k.Cluster, k.Kind, k.Identity)
		case op.Delete:
			b.Queue(p.sqlLock, k.Cluster, k.Kind, k.Identity)
			b.Queue(p.sqlDelete, k.Cluster, k.Kind, k.Identity, int64(op.Expected))
		case op.Expected == 0:
			value := nonNil(op.Value)
			b.Queue(p.sqlInsert, k.Cluster, k.Kind, k.Identity, int64(op.Schema), value, pgChecksum(enc, 1, op.Schema, value))
			b.Queue(p.sqlLock, k.Cluster, k.Kind, k.Identity)
		default:
			value := nonNil(op.Value)
			b.Queue(p.sqlLock, k.Cluster, k.Kind, k.Identity)
			b.Queue(p.sqlUpdate, k.Cluster, k.Kind, k.Identity, int64(op.Expected), int64(op.Schema), value,
				pgChecksum(enc, op.Expected+1, op.Schema, value))
		}
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return res, nil
	}
	for attempt := 0; ; attempt++ {
		out, err := p.runBatch(ctx, ops, sent, b, res)
		var pgErr *pgconn.PgError
		if err != nil && attempt < pgDeadlockRetries && errors.As(err, &pgErr) &&
			(pgErr.Code == pgDeadlockDetected || pgErr.Code == pgSerializationFailure) && ctx.Err() == nil {
			p.cfg.logger.Debug("persistence: batch rolled back by a deadlock, running it again", "store", p.String(), "attempt", attempt+1)
			continue
		}
		return out, err
	}
}

const (
	// pgDeadlockRetries is how many times Batch runs a transaction again
	// that PostgreSQL rolled back to break a deadlock.
	pgDeadlockRetries      = 5
	pgDeadlockDetected     = "40P01"
	pgSerializationFailure = "40001"
)

// scanVersion reads a statement's one-column result: the version, or
// found false for no row.
func scanVersion(br pgx.BatchResults) (v int64, found bool, err error) {
	err = br.QueryRow().Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return v, err == nil, err
}

// runBatch runs b (the statements of ops[sent]) in one transaction and
// fills a copy of pre (the results of the ops refused before sending).
func (p *Postgres) runBatch(ctx context.Context, ops []Op, sent []int, b *pgx.Batch, pre []Result) ([]Result, error) {
	res := append([]Result(nil), pre...)
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return nil, p.fail(ctx, "begin", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	br := tx.SendBatch(ctx, b)
	failed := func(err error) ([]Result, error) {
		_ = br.Close()
		return nil, p.fail(ctx, "batch", err)
	}
	for _, i := range sent {
		op := ops[i]
		switch {
		case op.Delete && op.Expected == 0:
			v, found, err := scanVersion(br)
			if err != nil {
				return failed(err)
			}
			if found {
				res[i].Err = &ConflictError{Key: op.Key, Expected: 0, Actual: uint64(v)}
			}
		case op.Expected == 0:
			v, inserted, err := scanVersion(br)
			if err != nil {
				return failed(err)
			}
			actual, _, err := scanVersion(br)
			if err != nil {
				return failed(err)
			}
			if inserted {
				res[i].Version = uint64(v)
			} else {
				res[i].Err = &ConflictError{Key: op.Key, Expected: 0, Actual: uint64(actual)}
			}
		default:
			actual, _, err := scanVersion(br)
			if err != nil {
				return failed(err)
			}
			v, done, err := scanVersion(br)
			if err != nil {
				return failed(err)
			}
			switch {
			case done && !op.Delete:
				res[i].Version = uint64(v)
			case done:
			default:
				res[i].Err = &ConflictError{Key: op.Key, Expected: op.Expected, Actual: uint64(actual)}
			}
		}
	}
	if err := br.Close(); err != nil {
		return nil, p.fail(ctx, "batch", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, p.fail(ctx, "commit", err)
	}
	return res, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Close closes the connection pool (waiting for calls in flight); later
// calls return ErrClosed.
func (p *Postgres) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.pool.Close()
	return nil
}
