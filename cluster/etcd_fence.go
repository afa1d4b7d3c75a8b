package cluster

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/asynkron/protoactor-go/cluster/clusterproviders/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Lease fencing of an etcd member: the others drop a member when its
// registration's lease expires in etcd; the member itself serves nothing
// from the moment the lease may have expired (the last remaining TTL etcd
// confirmed, counted from when the question was sent, less
// etcdFenceMargin), so it has stopped before they move its identities.
// A member whose registration lapsed (etcd answers that the lease is gone,
// or Proto.Actor registered it again under a new lease after the old one
// may have expired) stays fenced: the others never take its member id back
// (Proto.Actor blocks a member id that left), so it passivates every
// activation and must be restarted.
const (
	// etcdFencePoll is how often the member asks etcd for its lease's
	// remaining TTL.
	etcdFencePoll = 500 * time.Millisecond
	// etcdFenceMargin is taken off the confirmed TTL: the member stops
	// serving this long before its lease can expire (clock-rate drift and
	// the time between the check and a reply).
	etcdFenceMargin = 500 * time.Millisecond
)

// etcdFence tracks the lease of one etcd member.
type etcdFence struct {
	client *clientv3.Client
	lease  func() clientv3.LeaseID
	logger *slog.Logger

	validUntil atomic.Int64 // unix ns until which the lease is confirmed
	lost       atomic.Bool  // the registration lapsed: fenced for good
	confirmed  atomic.Int64 // the lease id last confirmed

	mu        sync.Mutex
	onRemoved func(reason string)
	stop      chan struct{}
	done      chan struct{}
}

// fenced reports whether the member may no longer be registered.
func (f *etcdFence) fenced() bool {
	return f.lost.Load() || time.Now().UnixNano() > f.validUntil.Load()
}

// run asks etcd for the lease's TTL every etcdFencePoll until stop.
func (f *etcdFence) run() {
	defer close(f.done)
	t := time.NewTicker(etcdFencePoll)
	defer t.Stop()
	for {
		f.check()
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
	}
}

// check asks etcd once.
func (f *etcdFence) check() {
	id := f.lease()
	if id <= 0 || f.lost.Load() {
		return
	}
	sent := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), EtcdLeaseTTL)
	resp, err := f.client.TimeToLive(ctx, id)
	cancel()
	if err != nil {
		return // the fence comes when the confirmed TTL runs out
	}
	confirmed := clientv3.LeaseID(f.confirmed.Load())
	lapsed := resp.TTL <= 0 || (confirmed != 0 && id != confirmed && time.Now().UnixNano() > f.validUntil.Load())
	if lapsed {
		if confirmed == 0 {
			return // not registered yet
		}
		f.lost.Store(true)
		f.logger.Error("ringactor/cluster: this member's etcd registration lapsed (its lease expired): the others dropped it; it serves nothing from now on and passivates every activation: restart it")
		f.mu.Lock()
		hook := f.onRemoved
		f.mu.Unlock()
		if hook != nil {
			hook("etcd lease expired")
		}
		return
	}
	f.confirmed.Store(int64(id))
	until := sent.Add(time.Duration(resp.TTL)*time.Second - etcdFenceMargin).UnixNano()
	if until > f.validUntil.Load() {
		f.validUntil.Store(until)
	}
}

// close stops the fence's loop.
func (f *etcdFence) close() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	<-f.done
}

// etcdProviderLease returns a function reading the lease id of
// Proto.Actor's provider (its unexported field "leaseID", read atomically
// as Proto.Actor does).
func etcdProviderLease(p *etcd.Provider) (func() clientv3.LeaseID, error) {
	f := reflect.ValueOf(p).Elem().FieldByName("leaseID")
	if !f.IsValid() || f.Type() != reflect.TypeOf(clientv3.LeaseID(0)) {
		return nil, errors.New("ringactor/cluster: Proto.Actor's etcd provider has no leaseID field of type clientv3.LeaseID; update etcdProviderLease")
	}
	ptr := (*int64)(unsafe.Pointer(f.UnsafeAddr()))
	return func() clientv3.LeaseID { return clientv3.LeaseID(atomic.LoadInt64(ptr)) }, nil
}
