package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Lease fencing of an etcd member: the others drop a member when its
// registration's lease expires in etcd; the member itself serves nothing
// from the moment the lease may have expired (the last remaining TTL etcd
// confirmed, counted from when the question was sent, less
// etcdFenceMargin), so it has stopped before they move its identities.
// A member whose registration lapsed (etcd answers that the lease is gone)
// passivates every activation and, once they have all stopped and etcd
// answers, rejoins as a new incarnation: a new member id ("<id>.N") under
// a new lease, since the others never take a dropped member id back
// (Proto.Actor blocks a member id that left). Its identities then come
// back to it by the usual hand-off.
const (
	// etcdFencePoll is how often the member asks etcd for its lease's
	// remaining TTL (and, fenced, tries to rejoin).
	etcdFencePoll = 500 * time.Millisecond
	// etcdFenceMargin is taken off the confirmed TTL: the member stops
	// serving this long before its lease can expire (clock-rate drift and
	// the time between the check and a reply).
	etcdFenceMargin = 500 * time.Millisecond
)

// fenced reports whether the member may no longer be registered in etcd
// (its lease may have expired, or has): it then serves nothing. A client
// is never fenced.
func (p *etcdProvider) fenced() bool {
	return p.fencing.Load() && (p.lost.Load() || time.Now().UnixNano() > p.validUntil.Load())
}

// setOnRemoved gives the provider the member's passivation of every
// activation, called when the registration lapsed.
func (p *etcdProvider) setOnRemoved(f func(string)) {
	p.mu.Lock()
	p.onRemoved = f
	p.mu.Unlock()
}

// setActivations gives the provider the member's count of live
// activations: a member whose registration lapsed rejoins only once it
// holds none.
func (p *etcdProvider) setActivations(f func() int) {
	p.mu.Lock()
	p.activations = f
	p.mu.Unlock()
}

// memberID returns the member id the member is registered under now.
func (p *etcdProvider) memberID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.node.ID
}

// register grants a new lease, puts the member's registration under id
// with it, and keeps the lease alive: the member is registered, and
// confirmed for the lease's TTL from when the grant was asked.
func (p *etcdProvider) register(id string) error {
	p.mu.Lock()
	node := p.node
	p.mu.Unlock()
	node.ID, node.Name = id, id
	data, err := json.Marshal(node)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(p.ctx, etcdCallTimeout)
	defer cancel()
	sent := time.Now()
	g, err := p.client.Grant(ctx, int64(EtcdLeaseTTL/time.Second))
	if err != nil {
		return err
	}
	if _, err := p.client.Put(ctx, p.prefix+id, string(data), clientv3.WithLease(g.ID)); err != nil {
		p.revoke(g.ID)
		return err
	}
	p.mu.Lock()
	p.node = node
	p.mu.Unlock()
	p.lease.Store(int64(g.ID))
	p.validUntil.Store(sent.Add(time.Duration(g.TTL)*time.Second - etcdFenceMargin).UnixNano())
	p.lost.Store(false)
	p.keepAlive(g.ID)
	return nil
}

// revoke revokes lease id, best effort (what it fails to revoke expires).
func (p *etcdProvider) revoke(id clientv3.LeaseID) {
	if id == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, etcdCallTimeout)
	_, _ = p.client.Revoke(ctx, id)
	cancel()
}

// keepAlive keeps lease id alive (ending the keep-alive of the previous
// lease) until the lease expires, etcd stays silent for its TTL, or
// Shutdown; the fence then checks the lease at once.
func (p *etcdProvider) keepAlive(id clientv3.LeaseID) {
	ctx, cancel := context.WithCancel(p.ctx)
	p.mu.Lock()
	if p.kaCancel != nil {
		p.kaCancel()
	}
	p.kaCancel = cancel
	p.mu.Unlock()
	ch, err := p.client.KeepAlive(ctx, id)
	if err != nil {
		p.logger().Debug("ringactor/cluster: keeping the etcd lease alive failed", slog.Any("error", err))
		p.signalFence()
		return
	}
	p.kaLease.Store(int64(id))
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for range ch { // drained, as the etcd client requires
		}
		p.kaLease.CompareAndSwap(int64(id), 0)
		p.signalFence()
	}()
}

// signalFence makes the fence check the lease now.
func (p *etcdProvider) signalFence() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// fenceLoop checks the lease every etcdFencePoll, and when the keep-alive
// ends, until Shutdown.
func (p *etcdProvider) fenceLoop() {
	defer close(p.fenceDone)
	t := time.NewTicker(etcdFencePoll)
	defer t.Stop()
	for {
		select {
		case <-p.stopFence:
			return
		case <-t.C:
		case <-p.kick:
		}
		p.check()
	}
}

// check asks etcd for the lease's remaining TTL: a TTL confirms the lease
// for that long (and restarts its keep-alive when that ended); a lease
// that is gone means the others dropped the member, which passivates every
// activation and rejoins. A member whose registration lapsed tries to
// rejoin instead.
func (p *etcdProvider) check() {
	if p.lost.Load() {
		p.rejoin()
		return
	}
	id := clientv3.LeaseID(p.lease.Load())
	sent := time.Now()
	ctx, cancel := context.WithTimeout(p.ctx, etcdCallTimeout)
	resp, err := p.client.TimeToLive(ctx, id)
	cancel()
	switch {
	case err != nil:
		return // the fence comes when the confirmed TTL runs out
	case resp.TTL < 0: // etcd no longer has the lease
		p.lost.Store(true)
		p.logger().Warn("ringactor/cluster: this member's etcd registration lapsed (its lease expired): the others dropped it; passivating every activation, then rejoining as a new incarnation",
			slog.String("id", p.memberID()))
		p.mu.Lock()
		hook := p.onRemoved
		p.mu.Unlock()
		if hook != nil {
			hook("etcd lease expired")
		}
		p.rejoin()
		return
	case resp.TTL == 0:
		return // expiring (under a second left): confirms nothing
	}
	until := sent.Add(time.Duration(resp.TTL)*time.Second - etcdFenceMargin).UnixNano()
	if until > p.validUntil.Load() {
		p.validUntil.Store(until)
	}
	if p.kaLease.Load() != int64(id) {
		p.keepAlive(id)
	}
}

// rejoin registers the member whose registration lapsed as a new
// incarnation, once its activations have all stopped and its old lease is
// surely gone (revoked, or not found: no key of the old member id
// remains); until then, and while etcd does not answer, it stays fenced
// and the fence tries again at its next poll.
func (p *etcdProvider) rejoin() {
	p.mu.Lock()
	activations := p.activations
	p.mu.Unlock()
	if activations != nil && activations() > 0 {
		return // still passivating
	}
	if old := clientv3.LeaseID(p.lease.Load()); old != 0 {
		p.mu.Lock()
		if p.kaCancel != nil {
			p.kaCancel()
			p.kaCancel = nil
		}
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(p.ctx, etcdCallTimeout)
		_, err := p.client.Revoke(ctx, old)
		cancel()
		if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return
		}
		p.lease.Store(0)
	}
	// A new id at each attempt: one whose registration may have reached
	// etcd before the attempt failed may be dropped by the others by now.
	p.mu.Lock()
	p.incarnation++
	id := p.baseID + "." + strconv.Itoa(p.incarnation)
	old := p.node.ID
	p.mu.Unlock()
	if err := p.register(id); err != nil {
		p.logger().Debug("ringactor/cluster: rejoining etcd failed; the member stays fenced and tries again",
			slog.String("id", id), slog.Any("error", err))
		return
	}
	p.logger().Info("ringactor/cluster: rejoined etcd as a new incarnation", slog.String("old_id", old), slog.String("id", id))
}

// leaseID returns the current registration's lease (tests revoke it).
func (p *etcdProvider) leaseID() clientv3.LeaseID { return clientv3.LeaseID(p.lease.Load()) }
