package cluster

import (
	"context"
	"log/slog"
	"strings"
)

// WithProtoActorLogLevel sets the lowest level of Proto.Actor's own log
// records (its actor system, remote and cluster) that reach the member's
// logger (default slog.LevelWarn). Whatever the level, Proto.Actor's
// reports of a peer or client that disconnected ("EndpointWriter lost
// connection", ...), which it logs as errors, and its gossip actor's
// warnings about a member it cannot reach ("sendGossipForMember failed",
// one a round), are logged at debug level: nodes come and go, and the
// member logs one line naming the address of each member that left the
// topology instead (at warn level when it stopped answering, info when it
// left gracefully).
func WithProtoActorLogLevel(l slog.Level) Option {
	return func(c *memberConfig) { c.protoLogLevel = &l }
}

// protoLogger returns the logger given to Proto.Actor: logger's handler
// behind protoHandler.
func protoLogger(logger *slog.Logger, level *slog.Level) *slog.Logger {
	min := slog.LevelWarn
	if level != nil {
		min = *level
	}
	return slog.New(&protoHandler{next: logger.Handler(), min: min})
}

// disconnects are the beginnings of Proto.Actor's messages about a
// connection that ended or could not be made: a client that left, a member
// that stopped or died. The cluster handles each (its topology drops the
// member; a request in flight gets a typed error).
var disconnects = []string{
	"EndpointWriter lost connection",
	"EndpointWriter failed to connect",
	"EndpointWriter failed to create receive stream",
	"EndpointWriter failed to send connect request",
	"EndpointWriter failed to receive connect response",
	"EndpointWriter error when closing",
	"EndpointReader failed to send disconnection",
	"EndpointReader failed to read",
}

// quietWhenLost are the beginnings of Proto.Actor's messages about a member
// it cannot reach any more: its gossip actor warns at every gossip round
// until the topology drops the member. The member logs one line instead,
// with the address, when that happens (Member.logDepartures).
var quietWhenLost = []string{
	"sendGossipForMember failed",
}

// protoHandler demotes Proto.Actor's disconnection reports to debug level
// and drops records below min.
type protoHandler struct {
	next slog.Handler
	min  slog.Level
}

// level returns the level a record of Proto.Actor is logged at.
func (h *protoHandler) level(l slog.Level, msg string) slog.Level {
	for _, d := range disconnects {
		if strings.HasPrefix(msg, d) {
			return slog.LevelDebug
		}
	}
	for _, q := range quietWhenLost {
		if strings.HasPrefix(msg, q) {
			return slog.LevelDebug
		}
	}
	return l
}

// Enabled implements slog.Handler; a record may still be demoted (and
// dropped) in Handle.
func (h *protoHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *protoHandler) Handle(ctx context.Context, r slog.Record) error {
	l := h.level(r.Level, r.Message)
	if l < h.min || !h.next.Enabled(ctx, l) {
		return nil
	}
	r.Level = l
	return h.next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h *protoHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &protoHandler{next: h.next.WithAttrs(attrs), min: h.min}
}

// WithGroup implements slog.Handler.
func (h *protoHandler) WithGroup(name string) slog.Handler {
	return &protoHandler{next: h.next.WithGroup(name), min: h.min}
}
