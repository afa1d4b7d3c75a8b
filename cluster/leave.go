package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"

	"github.com/ringactor/ringactor/internal/wire"
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

// pushAttempts bounds the owners a leaving member tries for one state:
// when the next owner is gone (it died, or left too), the owner after it in
// the then current topology.
const pushAttempts = 3

// pushStates sends each parked state to the member that owns its identity
// once this member has left. A state no owner takes in time is lost (the
// identity's next activation starts without it): that is logged, not
// returned, since the member itself leaves cleanly.
func (m *Member) pushStates(ctx context.Context, parked map[string]parkedState) error {
	if len(parked) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.pushTimeout)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, st := range parked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.pushState(ctx, st); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		m.logger.Warn("ringactor/cluster: leaving member lost state of identities it could not hand over",
			slog.Int("identities", len(errs)), slog.Any("error", errors.Join(errs...)))
	}
	return nil
}

// pushState sends one state to the identity's next owner.
func (m *Member) pushState(ctx context.Context, st parkedState) error {
	msg := &wire.HandoffState{Cluster: m.name, Protocol: ProtocolVersion, Kind: st.kind, Identity: st.identity, State: st.state}
	var errs []error
	for range pushAttempts {
		owner := m.nextOwner(st.kind, st.identity)
		if owner == "" {
			return nil // the last member: nobody to give the state to
		}
		if _, err := m.requestGrace(ctx, actor.NewPID(owner, placementActor), msg, 0); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", owner, err))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		return nil
	}
	return fmt.Errorf("%s/%s: %w", st.kind, st.identity, errors.Join(errs...))
}

// nextOwner returns the owner of the identity in the current topology
// without this member.
func (m *Member) nextOwner(kind, identity string) string {
	v := m.currentView()
	rest := make(pcluster.Members, 0, len(v.all))
	for _, mem := range v.all {
		if mem.Address() != v.self {
			rest = append(rest, mem)
		}
	}
	if len(rest) == 0 {
		return ""
	}
	if r := v.reqs[kind]; r != Anywhere {
		nodes, _ := nodesOf(rest, m.latestAds())
		return view{nodes: nodes}.placeDevice(r, kind, identity).addr
	}
	rdv := pcluster.NewRendezvous()
	rdv.UpdateMembers(rest)
	return rdv.GetByClusterIdentity(&pcluster.ClusterIdentity{Identity: identity, Kind: kind})
}
