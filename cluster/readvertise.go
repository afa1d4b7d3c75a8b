package cluster

import (
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// DefaultAdvertiseInterval is how often a member with CUDA devices checks
// them for a change worth advertising (WithAdvertiseInterval): a device
// that faulted is advertised at the next check; a change of free mailbox
// capacity alone at most once per capacityAdvertiseChecks checks.
const DefaultAdvertiseInterval = 500 * time.Millisecond

// capacityAdvertiseChecks is how many checks apart two advertisements
// made only because free capacity changed are, at least: a storm of
// launches moves the thresholds often, and every advertisement travels to
// every member.
const capacityAdvertiseChecks = 10

// WithAdvertiseInterval sets how often the member checks its devices for
// a change worth advertising (default DefaultAdvertiseInterval). Members
// without a CUDA device never re-advertise.
func WithAdvertiseInterval(d time.Duration) Option {
	return func(c *memberConfig) {
		if d > 0 {
			c.adEvery = d
		}
	}
}

// nodeAdGossipKey is the key of a member's latest advertisement in
// Proto.Actor's gossip state: the topology entry keeps the advertisement
// the member started with (providers fix a member's kinds when it joins),
// the gossip carries every later one to every member.
const nodeAdGossipKey = "ringactor.node"

// capacityBucket places a device's free mailboxes among the thresholds a
// member re-advertises at: none left, under 10 %, under 25 %, under 50 %
// of its capacity, or more. A device with no grid yet (capacity 0) is in
// the top bucket: its first program's grid makes room.
func capacityBucket(d deviceAd, capacity int) int {
	switch {
	case capacity <= 0:
		return 4
	case d.FreeMailboxes <= 0:
		return 0
	case d.FreeMailboxes*10 < capacity:
		return 1
	case d.FreeMailboxes*4 < capacity:
		return 2
	case d.FreeMailboxes*2 < capacity:
		return 3
	}
	return 4
}

// deviceState is what the member's re-advertising compares between two
// checks: its usable devices and the capacity bucket of each.
type deviceState struct {
	names   []string
	buckets []int
}

// currentDevices reads the member's usable devices (those that did not
// fault) and their free capacity.
func (m *Member) currentDevices() ([]deviceAd, deviceState) {
	var ads []deviceAd
	var st deviceState
	for _, b := range m.rt.Devices() {
		if b.Failed() != nil {
			continue
		}
		d := deviceAdOf(b)
		ads = append(ads, d)
		st.names = append(st.names, d.Name)
		st.buckets = append(st.buckets, capacityBucket(d, b.MailboxStats().Capacity))
	}
	return ads, st
}

// readvertise runs while the member is up, when it started with a CUDA
// device: every adEvery it reads its devices, and it advertises them again
// when one faulted (at once) or a device's free capacity crossed a
// threshold (capacityBucket; at most once per capacityAdvertiseChecks
// checks). It ends with the member (closed).
func (m *Member) readvertise(kinds []*Kind) {
	defer close(m.adDone)
	_, last := m.currentDevices()
	t := time.NewTicker(m.adEvery)
	defer t.Stop()
	sinceCapacity := capacityAdvertiseChecks
	for {
		select {
		case <-m.closed:
			return
		case <-t.C:
		}
		sinceCapacity++
		ads, now := m.currentDevices()
		publish, capacityOnly := worthAdvertising(last, now, sinceCapacity)
		if !publish {
			continue
		}
		if capacityOnly {
			sinceCapacity = 0
		}
		m.publishAd(kinds, ads, last, now)
		last = now
	}
}

// worthAdvertising decides whether a check that found now after last
// advertises again: at once when the usable devices changed; when only a
// device's capacity bucket did, once sinceCapacity checks have passed
// since the last advertisement of that sort (capacityAdvertiseChecks).
func worthAdvertising(last, now deviceState, sinceCapacity int) (publish, capacityOnly bool) {
	if !slices.Equal(now.names, last.names) {
		return true, false
	}
	if slices.Equal(now.buckets, last.buckets) || sinceCapacity < capacityAdvertiseChecks {
		return false, false
	}
	return true, true
}

// publishAd makes ads the member's advertisement: in its own view at once
// (its placement passivates what it no longer owns), sent to every other
// member's placement actor, and in the gossip, which carries it to members
// that join later and to any the message missed.
func (m *Member) publishAd(kinds []*Kind, ads []deviceAd, before, now deviceState) {
	m.adVersion++
	a := nodeAd{devices: ads, reqs: kindReqs(kinds), version: m.adVersion}
	enc := a.encode()
	m.setAd(m.sys.ID, enc)
	m.mu.Lock()
	c, others := m.cluster, m.view.others
	m.mu.Unlock()
	push := url.Values{"cluster": {m.name}, "member": {m.sys.ID}, "ad": {enc}}
	msg := wrapperspb.String(adPushPrefix + push.Encode())
	for _, addr := range others {
		m.sys.Root.Send(actor.NewPID(addr, placementActor), msg)
	}
	if c != nil && c.Gossip != nil {
		c.Gossip.SetState(nodeAdGossipKey, wrapperspb.String(enc))
	}
	attrs := []any{slog.Any("devices", now.names), slog.Any("before", before.names), slog.Any("capacity_buckets", now.buckets)}
	switch {
	case len(now.names) == 0 && len(before.names) > 0:
		m.logger.Warn("ringactor/cluster: the member's last usable device faulted: it advertises no device now, and its identities that need one move to members that have one", attrs...)
	case len(now.names) < len(before.names):
		m.logger.Warn("ringactor/cluster: a device faulted: the member advertises fewer devices (a smaller placement weight); its identities stay, their kernels on the other devices or their fallbacks", attrs...)
	default:
		m.logger.Info("ringactor/cluster: the member's free device capacity crossed a threshold: advertised again", attrs...)
	}
	m.adverts.Add(1)
}

// kindReqs returns the requirements of kinds that are not Anywhere.
func kindReqs(kinds []*Kind) map[string]Requirement {
	var reqs map[string]Requirement
	for _, k := range kinds {
		if k.req != Anywhere {
			if reqs == nil {
				reqs = map[string]Requirement{}
			}
			reqs[k.name] = k.req
		}
	}
	return reqs
}

// onGossip takes another member's new advertisement.
func (m *Member) onGossip(u *pcluster.GossipUpdate) {
	if u.Key != nodeAdGossipKey || u.MemberID == m.sys.ID || u.Value == nil {
		return
	}
	var s wrapperspb.StringValue
	if err := u.Value.UnmarshalTo(&s); err != nil || !isNodeAd(s.GetValue()) {
		return
	}
	m.setAd(u.MemberID, s.GetValue())
}

// adPushPrefix starts a re-advertisement sent straight to a member's
// placement actor: the cluster's name, the member id and the
// advertisement, URL-encoded.
const adPushPrefix = "ringactor.node.push?"

// onAdPush takes a re-advertisement another member sent straight here.
func (m *Member) onAdPush(s string) {
	rest, ok := strings.CutPrefix(s, adPushPrefix)
	if !ok {
		return
	}
	v, err := url.ParseQuery(rest)
	if err != nil || v.Get("cluster") != m.name || v.Get("member") == "" || v.Get("member") == m.sys.ID || !isNodeAd(v.Get("ad")) {
		return
	}
	m.setAd(v.Get("member"), v.Get("ad"))
}

// setAd records the advertisement of member id, unless one of a later
// version is known (the message and the gossip may bring them in either
// order), and places identities by it from now on.
func (m *Member) setAd(id, ad string) {
	next, _ := parseNodeAd([]string{ad})
	m.mu.Lock()
	if old, ok := m.ads[id]; ok {
		if cur, _ := parseNodeAd([]string{old}); old == ad || cur.version >= next.version {
			m.mu.Unlock()
			return
		}
	}
	if m.ads == nil {
		m.ads = map[string]string{}
	}
	m.ads[id] = ad
	if m.view.all != nil {
		m.view.nodes, m.view.reqs = nodesOf(m.view.all, m.ads)
	}
	close(m.topoCh)
	m.topoCh = make(chan struct{})
	m.mu.Unlock()
	if m.placement != nil {
		m.sys.Root.Send(m.placement, topologyChanged{})
	}
}

// latestAds returns a copy of the members' latest advertisements.
func (m *Member) latestAds() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]string, len(m.ads))
	for k, v := range m.ads {
		out[k] = v
	}
	return out
}

// startReadvertising starts the re-advertising loop of a member that has
// a CUDA device (a member without one has nothing to re-advertise).
func (m *Member) startReadvertising(kinds []*Kind) {
	if m.client || m.placement == nil || len(m.rt.Devices()) == 0 {
		return
	}
	m.adDone = make(chan struct{})
	go m.readvertise(kinds)
}

// Advertisements returns how many times the member advertised its devices
// again since it started (a device faulted, or its free capacity crossed
// a threshold).
func (m *Member) Advertisements() int { return int(m.adverts.Load()) }

// kindList returns the member's kinds.
func (m *Member) kindList() []*Kind {
	out := make([]*Kind, 0, len(m.kinds))
	for _, k := range m.kinds {
		out = append(out, k)
	}
	return out
}
