package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"

	"github.com/ringactor/ringactor/messages"
)

// passivateAll makes the placement actor stop taking activations and
// passivate every activation, waits until all have stopped, and sends the
// states they gave (and any other state parked here) to the identities'
// next owners: the members of this member's topology without it.
func (m *Member) passivateAll(ctx context.Context) error {
	if m.placement == nil {
		return nil
	}
	done := make(chan map[string]parkedState, 1)
	m.sys.Root.Send(m.placement, &passivateAllRequest{done: done})
	var parked map[string]parkedState
	select {
	case parked = <-done:
	case <-ctx.Done():
		return fmt.Errorf("ringactor/cluster: waiting for passivation: %w", ctx.Err())
	}
	return m.pushStates(ctx, parked)
}

// pushStates sends each parked state to the member that owns its identity
// once this member has left. A state its next owner does not take in time
// is lost (the identity's next activation starts without it).
func (m *Member) pushStates(ctx context.Context, parked map[string]parkedState) error {
	if len(parked) == 0 {
		return nil
	}
	v := m.currentView()
	rest := make(pcluster.Members, 0, len(v.all))
	for _, mem := range v.all {
		if mem.Address() != v.self {
			rest = append(rest, mem)
		}
	}
	if len(rest) == 0 {
		return nil // the last member: nobody to give the states to
	}
	rdv := pcluster.NewRendezvous()
	rdv.UpdateMembers(rest)
	ctx, cancel := context.WithTimeout(ctx, m.pushTimeout)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, st := range parked {
		owner := rdv.GetByClusterIdentity(&pcluster.ClusterIdentity{Identity: st.identity, Kind: st.kind})
		if owner == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := &messages.HandoffState{Cluster: m.name, Protocol: ProtocolVersion, Kind: st.kind, Identity: st.identity, State: st.state}
			_, err := m.requestGrace(ctx, actor.NewPID(owner, placementActor), msg, 0)
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("handing %s/%s to %s: %w", st.kind, st.identity, owner, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("ringactor/cluster: state hand-off: %w", errors.Join(errs...))
	}
	return nil
}
