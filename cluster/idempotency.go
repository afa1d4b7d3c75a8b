package cluster

import (
	"context"

	"github.com/ringactor/ringactor/internal/wire"
)

// idempotencyKey is the context key of WithIdempotencyKey.
type idempotencyKey struct{}

// WithIdempotencyKey returns a context whose requests (Request, Send,
// Ref.Request, RequestJSON) carry key, chosen by the client, so that the
// identity applies the request at most once: an identity on a member with
// a state store (WithStateStore) that has applied a request with key
// answers a request with the same key from its stored record (the first
// outcome, reply or error) without handling it again, across crashes,
// timeouts and moves, for its last MaxIdempotencyKeys keyed requests.
// Resend a request that timed out with the same key; use a new key for
// each distinct operation. A kind without a store ignores the key. A key
// that is empty, over MaxIdempotencyKeyLen bytes or not UTF-8 fails the
// request with ErrInvalidIdempotencyKey.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKey{}, key)
}

// IdempotencyKeyOf returns the key WithIdempotencyKey gave ctx, if any.
func IdempotencyKeyOf(ctx context.Context) (string, bool) {
	k, ok := ctx.Value(idempotencyKey{}).(string)
	return k, ok
}

// withKey sets w's idempotency key from ctx.
func withKey(ctx context.Context, w *wire.WireEnvelope) error {
	k, ok := IdempotencyKeyOf(ctx)
	if !ok {
		return nil
	}
	if err := CheckIdempotencyKey(k); err != nil {
		return err
	}
	w.IdempotencyKey = k
	return nil
}
