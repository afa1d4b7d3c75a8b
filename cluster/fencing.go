package cluster

import (
	"log/slog"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ringactor/ringactor/internal/wire"
)

// Fencing of the peers provider: what keeps a member that the others took
// for dead (its heartbeats late, a pause, a one-way loss) from serving the
// identities they place elsewhere. See docs/cluster.md, "Fencing".
//
//   - A member that has not had a greeting answered by a live member for
//     the failure timeout less half a heartbeat serves nothing (fenced,
//     peers.go): that member may drop it from now on. A new process on a
//     member's address (a restart) counts from its first answer
//     (newProcess).
//   - Fenced for one more failure timeout, it is presumed removed: it
//     passivates every activation (presumedRemoved).
//   - A member refuses the greetings of a member id it dropped (Removed in
//     its answer); the refused member passivates every activation at once
//     and rejoins as a new incarnation, a new member id (removed), fenced
//     until every live member has answered that incarnation.
//   - The new owner of an identity asks, in its hand-off round, the members
//     it dropped for silence lately too (suspects): one that answers
//     passivates the identity first; one that does not blocks the
//     activation until it is no longer a suspect, by then long fenced and
//     passivated.

// fencedNow is the fenceAt of a node that is fenced until further notice
// (rejoining as a new incarnation).
const fencedNow = 1

// suspectFor is how long, after it was last heard, a member dropped for
// silence stays a suspect (on top of the failure timeout), in failure
// timeouts: two, one more than it takes the dropped member to presume
// itself removed and passivate.
const suspectFor = 2

// isBlocked reports whether this node dropped the member id from its
// topology (Proto.Actor's block list: a member id that left never comes
// back).
func (p *PeersProvider) isBlocked(id string) bool {
	if p.c == nil || p.c.Remote == nil || id == "" {
		return false
	}
	return p.c.Remote.BlockList().IsBlocked(id)
}

// isCut reports whether a test cut the greetings with addr.
func (p *PeersProvider) isCut(addr string) bool {
	f := p.cut.Load()
	return f != nil && (*f)(addr)
}

// setOnRemoved gives the provider the member's passivation of every
// activation, called when the member learns or presumes that the others
// dropped it.
func (p *PeersProvider) setOnRemoved(f func(reason string)) {
	p.mu.Lock()
	p.onRemoved = f
	p.mu.Unlock()
}

// noteStall notes a stall of the node itself (its loop did not run for
// half a failure timeout: a paused process, a starved machine): every
// peer then gets a whole failure timeout to answer again before it is
// dropped (alive), since the silence was this node's. The caller holds mu.
func (p *PeersProvider) noteStall(now time.Time) {
	if !p.lastPublish.IsZero() && now.Sub(p.lastPublish) > p.timeout/2 {
		p.graceFrom = now
		if p.logger != nil {
			p.logger.Debug("ringactor/cluster: the membership loop stalled; peers get a failure timeout to answer again",
				slog.Duration("stall", now.Sub(p.lastPublish)))
		}
	}
	p.lastPublish = now
}

// presumedRemoved returns the member's passivation of every activation
// (to call without mu) when the node has been fenced for a whole failure
// timeout: the members it did not hear from have dropped it by then. Once
// per fence; a no-op function otherwise. The caller holds mu.
func (p *PeersProvider) presumedRemoved(now time.Time) func() {
	at := p.fenceAt.Load()
	if at == 0 || at == fencedNow || now.UnixNano() <= at {
		if at != fencedNow {
			p.presumed = false
		}
		return func() {}
	}
	if p.presumed || now.UnixNano() <= at+int64(p.timeout) || p.onRemoved == nil {
		return func() {}
	}
	p.presumed = true
	hook := p.onRemoved
	return func() { hook("out of touch with the cluster for a failure timeout: presumed dropped") }
}

// removed handles the answer of the member at addr that dropped this
// node's member id (the id of the greeting): the node passivates every
// activation and rejoins as a new incarnation, a new member id that no
// member has dropped, fenced until every live member has answered it.
func (p *PeersProvider) removed(addr, id string) {
	p.mu.Lock()
	me := p.self.Load()
	if p.stopped || me.GetId() != id {
		p.mu.Unlock()
		return // already rejoining, or leaving
	}
	p.incarnation++
	next := proto.Clone(me).(*wire.PeerInfo)
	next.Id = p.baseID + "." + strconv.Itoa(p.incarnation)
	p.self.Store(next)
	p.rejoinSince, p.presumed = time.Now(), true
	p.fenceAt.Store(fencedNow)
	hook := p.onRemoved
	p.mu.Unlock()
	if p.logger != nil {
		p.logger.Warn("ringactor/cluster: dropped from the cluster by a member that took this one for dead; passivating every activation and rejoining as a new incarnation",
			slog.String("by", addr), slog.String("old_id", id), slog.String("new_id", next.GetId()))
	}
	if hook != nil {
		hook("dropped by " + addr)
	}
	p.signal()
}

// rejoining reports whether the node rejoins as a new incarnation and some
// live member has not answered a greeting of it yet. The caller holds mu.
func (p *PeersProvider) rejoining(now time.Time) bool {
	if p.rejoinSince.IsZero() {
		return false
	}
	for _, pr := range p.peers {
		if p.alive(pr, now) && pr.acked.Before(p.rejoinSince) {
			return true
		}
	}
	p.rejoinSince = time.Time{}
	if p.logger != nil {
		p.logger.Info("ringactor/cluster: rejoined the cluster as a new incarnation", slog.String("id", p.self.Load().GetId()))
	}
	return false
}

// processID is the id of the process a member id names: the member id
// less its incarnation (".1", ".2", … once it rejoined).
func processID(memberID string) string {
	id, _, _ := strings.Cut(memberID, ".")
	return id
}

// newProcess forgets the answered greetings of the process that was at
// pr's address before another one (a member restarted on the same
// address): that process is gone, and its answers say nothing of the new
// one. Kept, the last of them dated this node's fence (updateFence) from
// before the restart, already past: the node fenced itself, and presumed
// itself dropped and passivated every activation, each time a member
// restarted on its address, though the new process had not heard of this
// node yet, let alone dropped it (it counts a member live only once it has
// heard from it). Like a member at a new address, the new process fences
// this node from its first answer on. The caller holds mu.
func newProcess(pr *peer) { pr.acked = time.Time{} }

// suspects returns the addresses of the members this node dropped without
// their saying they left, heard within the last (1+suspectFor) failure
// timeouts and not found dead since (their address refusing connections):
// they may still hold activations, so a hand-off round asks them too.
func (p *PeersProvider) suspects() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	var out []string
	for addr, pr := range p.peers {
		if pr.info == nil || pr.info.GetClient() || pr.info.GetLeaving() || p.alive(pr, now) {
			continue
		}
		if now.Sub(pr.lastSeen) >= (1+suspectFor)*p.timeout || pr.refused.After(pr.lastSeen) {
			continue
		}
		out = append(out, addr)
	}
	return out
}
