package persistence

import (
	"fmt"
	"time"
)

// kvTx is a transaction over a map of canonical keys to stored records: the
// embedded and in-memory stores both apply a batch through it.
type kvTx interface {
	// get returns the stored bytes of enc (nil: none); they may alias the
	// store's memory until the transaction ends.
	get(enc string) []byte
	put(enc string, b []byte) error
	del(enc string) error
}

// applyOps applies ops in order in tx and returns their results. An error
// is the transaction's own (a put or delete the store refused); the caller
// then rolls back.
func applyOps(c *config, tx kvTx, ops []Op, now time.Time) ([]Result, error) {
	res := make([]Result, len(ops))
	for i, op := range ops {
		if err := c.checkOp(op); err != nil {
			res[i].Err = err
			continue
		}
		enc := op.Key.String()
		var actual uint64
		if raw := tx.get(enc); raw != nil {
			rec, err := decodeRecord(op.Key, enc, raw, false)
			if err != nil {
				res[i].Err = err
				continue
			}
			actual = rec.Version
		}
		if actual != op.Expected {
			res[i].Err = &ConflictError{Key: op.Key, Expected: op.Expected, Actual: actual}
			continue
		}
		if op.Delete {
			if actual != 0 {
				if err := tx.del(enc); err != nil {
					return nil, fmt.Errorf("delete %s: %w", enc, err)
				}
			}
			continue
		}
		v := actual + 1
		if err := tx.put(enc, encodeRecord(enc, v, op.Schema, now, op.Value)); err != nil {
			return nil, fmt.Errorf("put %s: %w", enc, err)
		}
		res[i].Version = v
	}
	return res, nil
}
