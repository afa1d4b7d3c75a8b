package cluster

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"

	"github.com/ringactor/ringactor/gpu/cuda"
)

// Requirement says which members may host a kind's identities.
type Requirement uint8

const (
	// Anywhere: every member that lists the kind may host it, each with the
	// same share (Proto.Actor's rendezvous hashing). The default of NewKind
	// and its relatives.
	Anywhere Requirement = iota
	// DevicePreferred: members with a usable CUDA device host the kind,
	// weighted by their device count; only when none lists it do members
	// without a device host it, on the kernel's Go fallback (PlacementOf
	// says Fallback, and the hosting member logs it). The default of
	// NewDeviceKind.
	DevicePreferred
	// DeviceOnly: only members with a usable CUDA device host the kind,
	// weighted by their device count; while none lists it a request waits
	// (one may join) and fails with ErrNoCapacity at its deadline.
	DeviceOnly
)

// String names the requirement as its advertisement does.
func (r Requirement) String() string {
	switch r {
	case DevicePreferred:
		return "device-preferred"
	case DeviceOnly:
		return "device-only"
	}
	return "anywhere"
}

// ErrNoCapacity: no member of the topology can host an identity of a
// DeviceOnly kind (none of the members that list the kind has a usable
// device). A request asks again until its deadline (a member with a device
// may join meanwhile); its error then matches ErrNoCapacity and ErrTimeout.
var ErrNoCapacity = errors.New("ringactor/cluster: no member can host the kind")

// wireKindNoCapacity is the placement reply's error kind for ErrNoCapacity.
const wireKindNoCapacity = "no_capacity"

// Require sets which members may host the kind's identities (default
// Anywhere; DevicePreferred for NewDeviceKind and DefineDevice) and
// returns k. Every member that lists the kind advertises its requirement
// in its topology entry, so clients and members place its identities
// alike. Set it before the member starts.
func (k *Kind) Require(r Requirement) *Kind {
	k.req = r
	return k
}

// Requirement returns the kind's placement requirement (Require).
func (k *Kind) Requirement() Requirement { return k.req }

// nodeAdPrefix starts the name of the pseudo-kind in which a member
// advertises its devices and its kinds' requirements: the topology entry
// of every provider carries the member's kinds, so the advertisement
// travels with it. No request ever addresses it.
const nodeAdPrefix = "ringactor.node?"

// deviceAd is what a member advertises of one of its CUDA devices.
type deviceAd struct {
	Name              string // the backend's name: "cuda:0", "cuda:sim1"
	ComputeCapability string // "9.0"
	MemoryBytes       uint64 // device memory
	FreeMailboxes     int    // mailboxes the device's ring program grids have room for at start
}

// nodeAd is a member's advertisement.
type nodeAd struct {
	devices []deviceAd
	reqs    map[string]Requirement // kind → requirement, for its kinds that are not Anywhere
	// version orders a member's advertisements: 0 at start (the topology
	// entry's), one more at each re-advertisement (readvertise.go).
	version uint64
}

// encode is the advertisement's pseudo-kind name (no commas: the Kubernetes
// provider joins kinds with commas).
func (a nodeAd) encode() string {
	v := url.Values{}
	v.Set("devices", strconv.Itoa(len(a.devices)))
	for _, d := range a.devices {
		v.Add("name", d.Name)
		v.Add("cc", d.ComputeCapability)
		v.Add("mem", strconv.FormatUint(d.MemoryBytes, 10))
		v.Add("free", strconv.Itoa(d.FreeMailboxes))
	}
	for k, r := range a.reqs {
		v.Add("req", k+"="+strconv.Itoa(int(r)))
	}
	if a.version > 0 {
		v.Set("v", strconv.FormatUint(a.version, 10))
	}
	return nodeAdPrefix + v.Encode()
}

// parseNodeAd reads an advertisement from a member's kinds; ok is false
// when it has none.
func parseNodeAd(kinds []string) (a nodeAd, ok bool) {
	for _, k := range kinds {
		rest, found := strings.CutPrefix(k, nodeAdPrefix)
		if !found {
			continue
		}
		v, err := url.ParseQuery(rest)
		if err != nil {
			return nodeAd{}, false
		}
		names, ccs, mems, frees := v["name"], v["cc"], v["mem"], v["free"]
		for i, n := range names {
			d := deviceAd{Name: n}
			if i < len(ccs) {
				d.ComputeCapability = ccs[i]
			}
			if i < len(mems) {
				d.MemoryBytes, _ = strconv.ParseUint(mems[i], 10, 64)
			}
			if i < len(frees) {
				d.FreeMailboxes, _ = strconv.Atoi(frees[i])
			}
			a.devices = append(a.devices, d)
		}
		a.version, _ = strconv.ParseUint(v.Get("v"), 10, 64)
		for _, r := range v["req"] {
			kind, n, found := strings.Cut(r, "=")
			if x, err := strconv.Atoi(n); found && err == nil {
				if a.reqs == nil {
					a.reqs = map[string]Requirement{}
				}
				a.reqs[kind] = Requirement(x)
			}
		}
		return a, true
	}
	return nodeAd{}, false
}

// isNodeAd reports whether a kind name is an advertisement.
func isNodeAd(kind string) bool { return strings.HasPrefix(kind, nodeAdPrefix) }

// protoInternalKinds are the kinds Proto.Actor's cluster registers by
// itself on every member, whatever its configuration lists: its pubsub
// topic kind (Cluster.initKinds → ensureTopicKindRegistered), the only
// one in the version this module uses. They are in every member's
// topology entry (GetClusterKinds) but are no user's kinds. TestStatus
// checks that a member's entry holds nothing else beside its own kinds and
// the advertisement, so a Proto.Actor that registers more is noticed.
var protoInternalKinds = map[string]bool{pcluster.TopicActorKind: true}

// userKinds returns a member's topology kinds without the advertisement
// and Proto.Actor's internal kinds: the kinds its configuration gave.
func userKinds(kinds []string) []string {
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		if !isNodeAd(k) && !protoInternalKinds[k] {
			out = append(out, k)
		}
	}
	return out
}

// advertisement builds the member's advertisement, or "" when it has
// nothing to say (no device and only Anywhere kinds).
func (m *Member) advertisement(kinds []*Kind) string {
	a := nodeAd{reqs: kindReqs(kinds)}
	a.devices, _ = m.currentDevices()
	if len(a.devices) == 0 && len(a.reqs) == 0 {
		return ""
	}
	return a.encode()
}

// deviceAdOf is what the member advertises of device b now.
func deviceAdOf(b *cuda.Backend) deviceAd {
	d := deviceAd{Name: b.Name()}
	if info, ok := b.DeviceInfo(); ok {
		d.ComputeCapability = fmt.Sprintf("%d.%d", info.ComputeCapability.Major, info.ComputeCapability.Minor)
		d.MemoryBytes = info.TotalMem
	}
	st := b.MailboxStats()
	d.FreeMailboxes = st.Capacity - st.Mailboxes
	return d
}

// adKind is the pseudo-kind that carries the advertisement: its actors
// answer nothing.
func adKind(name string) *pcluster.Kind {
	return pcluster.NewKind(name, actor.PropsFromFunc(func(actor.Context) {}))
}

// nodeInfo is what placement knows of a member from its advertisement.
type nodeInfo struct {
	addr    string
	devices int
	kinds   map[string]bool
}

// devicePlacement is where a device kind's identity goes in a view.
type devicePlacement struct {
	addr       string // "" when no member can host it
	fallback   bool   // a DevicePreferred identity on a member without a device
	noCapacity bool   // a DeviceOnly kind that no member with a device lists
}

// placeDevice places an identity of a kind with requirement req (not
// Anywhere) among v's members by weighted rendezvous hashing.
func (v view) placeDevice(req Requirement, kind, identity string) devicePlacement {
	var dev, cpu []nodeInfo
	for _, n := range v.nodes {
		if !n.kinds[kind] {
			continue
		}
		if n.devices > 0 {
			dev = append(dev, n)
		} else {
			cpu = append(cpu, n)
		}
	}
	if len(dev) > 0 {
		return devicePlacement{addr: weightedOwner(dev, kind, identity)}
	}
	if req == DevicePreferred && len(cpu) > 0 {
		return devicePlacement{addr: weightedOwner(cpu, kind, identity), fallback: true}
	}
	return devicePlacement{noCapacity: req == DeviceOnly && len(cpu) > 0}
}

// weightedOwner returns the member with the highest weighted rendezvous
// score -w/ln(h) for the identity, w its device count (at least 1), h a
// hash of (kind, identity, member address) uniform in (0, 1): a member owns
// a share w/Σw of the identities, and a member that joins or leaves moves
// only identities to or from itself.
func weightedOwner(nodes []nodeInfo, kind, identity string) string {
	best, bestScore := "", math.Inf(-1)
	for _, n := range nodes {
		s := rendezvousScore(float64(max(n.devices, 1)), kind, identity, n.addr)
		if s > bestScore || (s == bestScore && n.addr < best) {
			best, bestScore = n.addr, s
		}
	}
	return best
}

// rendezvousScore is -w/ln(h) for h = unitHash(kind, identity, addr).
func rendezvousScore(w float64, kind, identity, addr string) float64 {
	return -w / math.Log(unitHash(kind, identity, addr))
}

// unitHash maps (kind, identity, addr) to (0, 1): FNV-1a 64 through the
// splitmix64 finaliser, its top 53 bits centred in their interval.
func unitHash(kind, identity, addr string) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(kind))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(identity))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(addr))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return (float64(x>>11) + 0.5) / (1 << 53)
}

// Placement says where an identity is placed by a node's topology.
type Placement struct {
	Member      string      // the owner's address; "" when none can host it
	Requirement Requirement // the kind's requirement, as the topology advertises it
	Devices     int         // the owner's advertised devices
	// Fallback is true for a DevicePreferred identity placed on a member
	// without a device (none with a device lists the kind): it runs on the
	// kernel's Go fallback.
	Fallback bool
}

// PlacementOf returns where this node's topology places the identity of
// kind: the owning member and, for a device kind, whether it is a fallback.
// With no member able to host it, Member is "" and the error is
// ErrNoCapacity (a DeviceOnly kind) or ErrUnknownKind.
func (m *Member) PlacementOf(kind, identity string) (Placement, error) {
	v := m.currentView()
	p := Placement{Requirement: v.reqs[kind]}
	if p.Requirement == Anywhere {
		p.Member = v.owner(kind, identity)
	} else {
		d := v.placeDevice(p.Requirement, kind, identity)
		if d.noCapacity {
			return p, fmt.Errorf("%w: %q needs a device and no member with one lists it", ErrNoCapacity, kind)
		}
		p.Member, p.Fallback = d.addr, d.fallback
	}
	if p.Member == "" {
		return p, fmt.Errorf("%w: %q", ErrUnknownKind, kind)
	}
	for _, n := range v.nodes {
		if n.addr == p.Member {
			p.Devices = n.devices
		}
	}
	return p, nil
}

// nodesOf reads the members' advertisements: every member, and the
// requirement of every kind some member advertises. ads holds the latest
// advertisements by member id (readvertise.go): a member's entry there
// replaces the one its topology entry carries from its start.
func nodesOf(members []*pcluster.Member, ads map[string]string) ([]nodeInfo, map[string]Requirement) {
	nodes := make([]nodeInfo, 0, len(members))
	reqs := map[string]Requirement{}
	for _, mem := range members {
		n := nodeInfo{addr: mem.Address(), kinds: map[string]bool{}}
		for _, k := range mem.Kinds {
			n.kinds[k] = true
		}
		adKinds := mem.Kinds
		if ad, ok := adOf(ads, mem.Id); ok {
			adKinds = []string{ad}
		}
		if a, ok := parseNodeAd(adKinds); ok {
			n.devices = len(a.devices)
			for k, r := range a.reqs {
				if _, seen := reqs[k]; !seen || r > reqs[k] {
					reqs[k] = r // members that disagree: the strictest wins
				}
			}
		}
		nodes = append(nodes, n)
	}
	return nodes, reqs
}

// adOf returns the latest advertisement of the member with topology id
// id. Advertisements are kept by the member's actor system id; a member
// that rejoined after being fenced has the topology id "SYSTEMID.N" (its
// Nth incarnation), and its advertisement is the system's.
func adOf(ads map[string]string, id string) (string, bool) {
	if ad, ok := ads[id]; ok {
		return ad, true
	}
	if i := strings.LastIndexByte(id, '.'); i > 0 {
		ad, ok := ads[id[:i]]
		return ad, ok
	}
	return "", false
}

// PlacementStamper is implemented by a reply type (through its pointer)
// that records where it was computed: before the reply leaves its member,
// StampPlacement is called with "HOST:PORT/PLACEMENT", the member's
// address and its kernel's placement ("cuda:sim1", or actors.PlacementCPU
// for a kernel on its Go fallback).
type PlacementStamper interface {
	StampPlacement(where string)
}
