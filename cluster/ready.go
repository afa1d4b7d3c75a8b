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

// Ready returns nil once the member serves: the cluster topology it sees
// lists this member and every kind it hosts (for a client: any member).
// Before that, and from the moment Close begins (the member is leaving), it
// returns an error wrapping ErrNotReady that says why. It is what a
// readiness probe asks.
func (m *Member) Ready() error {
	select {
	case <-m.closed:
		return fmt.Errorf("%w: leaving the cluster", ErrNotReady)
	default:
	}
	if m.cluster == nil {
		return fmt.Errorf("%w: not attached to a cluster", ErrNotReady)
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

// WaitReady waits until Ready returns nil (re-checking at each topology
// change), or ctx ends; it returns Ready's last error joined with ctx's
// then, or ErrClosed once the member is closing.
func (m *Member) WaitReady(ctx context.Context) error {
	for {
		m.mu.Lock()
		ch := m.topoCh
		m.mu.Unlock()
		err := m.Ready()
		if err == nil {
			return nil
		}
		select {
		case <-ch:
		case <-m.closed:
			return fmt.Errorf("%w: %w", ErrClosed, err)
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
	}
}
