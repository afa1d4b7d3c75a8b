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

	"github.com/jackc/pgx/v5"
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

	sqlLoad, sqlInsert, sqlUpdate, sqlDelete, sqlVersion string
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
	safe := fmt.Sprintf("postgres://%s@%s:%d/%s", pc.ConnConfig.User, pc.ConnConfig.Host, pc.ConnConfig.Port, pc.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, unavailable(safe, err)
	}
	p := &Postgres{cfg: cfg, table: cfg.table, pool: pool, dsn: safe}
	t := cfg.table
	p.sqlLoad = `SELECT version, schema_version, value, checksum, updated_at FROM ` + t + ` WHERE cluster = $1 AND kind = $2 AND identity = $3`
	p.sqlInsert = `INSERT INTO ` + t + ` (cluster, kind, identity, version, schema_version, value, checksum, updated_at) VALUES ($1, $2, $3, 1, $4, $5, $6, now()) ON CONFLICT DO NOTHING RETURNING version`
	p.sqlUpdate = `UPDATE ` + t + ` SET version = version + 1, schema_version = $5, value = $6, checksum = $7, updated_at = now() WHERE cluster = $1 AND kind = $2 AND identity = $3 AND version = $4 RETURNING version`
	p.sqlDelete = `DELETE FROM ` + t + ` WHERE cluster = $1 AND kind = $2 AND identity = $3 AND version = $4 RETURNING version`
	p.sqlVersion = `SELECT version FROM ` + t + ` WHERE cluster = $1 AND kind = $2 AND identity = $3`
	if err := p.createTable(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	cfg.logger.Debug("persistence: opened PostgreSQL store", "dsn", safe, "table", t)
	return p, nil
}

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
		version, schema, sum int64
		rec                  = Record{Key: key}
	)
	err := p.pool.QueryRow(ctx, p.sqlLoad, key.Cluster, key.Kind, key.Identity).Scan(&version, &schema, &rec.Value, &sum, &rec.Updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return Record{}, notFound(key)
	}
	if err != nil {
		return Record{}, p.fail(ctx, "load "+key.String(), err)
	}
	enc := key.String()
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

// Batch applies ops in one transaction (see Store.Batch): the statements
// go in one pipelined round trip, conflicts are looked up (their actual
// versions) in a second one only when there are any, then one commit.
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
	sent := make([]int, 0, len(ops)) // index in ops of each queued statement
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
			b.Queue(p.sqlVersion, k.Cluster, k.Kind, k.Identity)
		case op.Delete:
			b.Queue(p.sqlDelete, k.Cluster, k.Kind, k.Identity, int64(op.Expected))
		case op.Expected == 0:
			value := nonNil(op.Value)
			b.Queue(p.sqlInsert, k.Cluster, k.Kind, k.Identity, int64(op.Schema), value, pgChecksum(enc, 1, op.Schema, value))
		default:
			value := nonNil(op.Value)
			b.Queue(p.sqlUpdate, k.Cluster, k.Kind, k.Identity, int64(op.Expected), int64(op.Schema), value,
				pgChecksum(enc, op.Expected+1, op.Schema, value))
		}
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return res, nil
	}
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return nil, p.fail(ctx, "begin", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var conflicts []int
	br := tx.SendBatch(ctx, b)
	for _, i := range sent {
		op := ops[i]
		var v int64
		err := br.QueryRow().Scan(&v)
		switch {
		case op.Delete && op.Expected == 0:
			if err == nil {
				res[i].Err = &ConflictError{Key: op.Key, Expected: 0, Actual: uint64(v)}
				continue
			}
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
		case err == nil:
			if !op.Delete {
				res[i].Version = uint64(v)
			}
			continue
		case errors.Is(err, pgx.ErrNoRows):
			conflicts = append(conflicts, i)
			continue
		}
		_ = br.Close()
		return nil, p.fail(ctx, "batch", err)
	}
	if err := br.Close(); err != nil {
		return nil, p.fail(ctx, "batch", err)
	}
	if len(conflicts) > 0 {
		cb := &pgx.Batch{}
		for _, i := range conflicts {
			k := ops[i].Key
			cb.Queue(p.sqlVersion, k.Cluster, k.Kind, k.Identity)
		}
		br := tx.SendBatch(ctx, cb)
		for _, i := range conflicts {
			var v int64
			if err := br.QueryRow().Scan(&v); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				_ = br.Close()
				return nil, p.fail(ctx, "batch", err)
			}
			res[i].Err = &ConflictError{Key: ops[i].Key, Expected: ops[i].Expected, Actual: uint64(v)}
		}
		if err := br.Close(); err != nil {
			return nil, p.fail(ctx, "batch", err)
		}
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
