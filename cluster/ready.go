package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// ErrNotReady is what Ready wraps while the member cannot serve: it has not
// joined yet, the topology does not list its kinds yet, or it is leaving.
var ErrNotReady = errors.New("ringactor/cluster: not ready")

// Ready returns nil once the member serves: it has joined (its provider
// has heard from, or given up on, every member it knows of), and the
// cluster topology it sees lists this member and every kind it hosts (for
// a client: any member). Before that, and from the moment Close begins
// (the member is leaving), it returns an error wrapping ErrNotReady that
// says why; when every node the provider reached refused this one (its
// TLS handshake, a *TLSError matching ErrTLSRefused, or another cluster's
// node, ErrClusterMismatch), the error wraps those refusals too. It is
// what a readiness probe asks.
func (m *Member) Ready() error {
	select {
	case <-m.closed:
		return fmt.Errorf("%w: leaving the cluster", ErrNotReady)
	default:
	}
	if m.cluster == nil {
		return fmt.Errorf("%w: not attached to a cluster", ErrNotReady)
	}
	if err := m.refusedJoin(); err != nil {
		return err
	}
	if !m.client && !m.isReady() {
		return fmt.Errorf("%w: still joining (waiting for the known members to answer)", ErrNotReady)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.client {
		if m.members == 0 {
			return fmt.Errorf("%w: no cluster member seen yet", ErrNotReady)
		}
		return nil
	}
	if !m.addrs[m.sys.Address()] {
		return fmt.Errorf("%w: not in the cluster topology yet", ErrNotReady)
	}
	var missing []string
	for kind := range m.cluster.Config.Kinds {
		if m.topoKinds[kind] == 0 {
			missing = append(missing, kind)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("%w: kinds %v not in the topology yet", ErrNotReady, missing)
	}
	return nil
}

// refusedJoin returns, once the member's provider has settled, why no
// node it reached accepted this one (refusedError), or nil.
func (m *Member) refusedJoin() error {
	m.mu.Lock()
	settled := m.settled
	m.mu.Unlock()
	if settled == nil {
		return nil
	}
	select {
	case <-settled:
	default:
		return nil
	}
	if err := m.providerJoinError(); err != nil {
		return &refusedError{err: err}
	}
	return nil
}

// refusedError is Ready's error when every node the provider reached
// refused this one: final for WaitReady.
type refusedError struct{ err error }

func (e *refusedError) Error() string {
	return ErrNotReady.Error() + ": no known member accepted this node: " + e.err.Error()
}

func (e *refusedError) Unwrap() []error { return []error{ErrNotReady, e.err} }

// WaitReady waits until Ready returns nil (re-checking at each topology
// change and when the provider settles), or ctx ends; it returns Ready's
// last error joined with ctx's then, or ErrClosed once the member is
// closing. When every node the provider reached refused this one (a TLS
// handshake refused, another cluster), it returns that error at once.
func (m *Member) WaitReady(ctx context.Context) error {
	for {
		m.mu.Lock()
		ch, settled := m.topoCh, m.settled
		m.mu.Unlock()
		err := m.Ready()
		if err == nil {
			return nil
		}
		var refused *refusedError
		if errors.As(err, &refused) {
			return err
		}
		if settled != nil {
			select {
			case <-settled:
				settled = nil // a nil channel: waits on the others only
			default:
			}
		}
		select {
		case <-settled:
		case <-ch:
		case <-m.closed:
			return fmt.Errorf("%w: %w", ErrClosed, err)
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
	}
}
