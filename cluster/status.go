package cluster

import (
	"sort"
	"sync"
	"time"
)

// Member states in a Status.
const (
	MemberReady   = "ready"   // in the topology (this member: Ready returns nil)
	MemberJoining = "joining" // this member, not ready yet
	MemberLeaving = "leaving" // this member, closing
	MemberLost    = "lost"    // was in the topology, no longer is
)

// Placement events of a PlacementMove.
const (
	MoveActivated  = "activated"  // the identity was activated here
	MovePassivated = "passivated" // its activation here ended
)

// statusHistory bounds the departed members and placement moves a member
// remembers for Status.
const statusHistory = 64

// Status is what a member knows of its cluster, for operators (the admin
// dashboard): read at call time, never on the request path.
type Status struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	// State is this member's: MemberReady, MemberJoining or MemberLeaving;
	// NotReady says why when it is not ready.
	State    string `json:"state"`
	NotReady string `json:"not_ready,omitempty"`
	// Members are the topology's members (this one included) and the
	// members lost recently, by address.
	Members []MemberStatus `json:"members"`
	// Moves are this member's recent placement events, oldest first.
	Moves []PlacementMove `json:"moves"`
}

// MemberStatus is one member in a Status.
type MemberStatus struct {
	Address string `json:"address"`
	ID      string `json:"id,omitempty"`
	State   string `json:"state"`
	Self    bool   `json:"self,omitempty"`
	// Kinds are the kinds it hosts, as its configuration gave them: not
	// Proto.Actor's internal kinds (its pubsub topic kind) nor ringactor's
	// advertisement, which its topology entry carries too.
	Kinds []string `json:"kinds"`
	// Devices are the usable compute backends of its runtime, those whose
	// Available is nil (this member only: another member's are on its own
	// dashboard). A backend without a device, or one that faulted, is left
	// out; the admin endpoint's /api/devices lists it with its reason.
	Devices []string `json:"devices,omitempty"`
	// AdvertisedDevices is how many usable CUDA devices the member
	// advertises (its placement weight for device kinds), as this
	// member's view holds it: it drops when one of them faults.
	AdvertisedDevices int `json:"advertised_devices,omitempty"`
	// Identities are the identities active here, by kind (this member
	// only).
	Identities map[string][]string `json:"identities,omitempty"`
	// Since is when it was lost (MemberLost).
	Since time.Time `json:"since,omitzero"`
}

// PlacementMove is one placement event of this member.
type PlacementMove struct {
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind"`
	Identity string    `json:"identity"`
	// Event is MoveActivated or MovePassivated.
	Event string `json:"event"`
	// To is the member that owns the identity by this member's topology
	// when it was passivated ("" when it is this member, e.g. leaving).
	To string `json:"to,omitempty"`
	// State: the activation started from (or ended with) a saved state.
	State bool `json:"state,omitempty"`
}

// statusLog is what Status reads that the placement actor and the
// topology handler write: the active identities, the recent moves and the
// members lost. Written once per activation or topology change.
type statusLog struct {
	mu     sync.Mutex
	active map[string]map[string]bool // kind → identity
	moves  []PlacementMove            // a ring of statusHistory
	next   int
	lost   map[string]time.Time // address → when it left the topology
	seen   map[string]bool      // the previous topology's addresses
}

// move records a placement event.
func (l *statusLog) move(mv PlacementMove) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active == nil {
		l.active = map[string]map[string]bool{}
	}
	ids := l.active[mv.Kind]
	if mv.Event == MoveActivated {
		if ids == nil {
			ids = map[string]bool{}
			l.active[mv.Kind] = ids
		}
		ids[mv.Identity] = true
	} else {
		delete(ids, mv.Identity)
	}
	if len(l.moves) < statusHistory {
		l.moves = append(l.moves, mv)
	} else {
		l.moves[l.next] = mv
	}
	l.next = (l.next + 1) % statusHistory
}

// topology records which addresses left since the previous topology.
func (l *statusLog) topology(addrs map[string]bool, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil {
		l.lost = map[string]time.Time{}
	}
	for a := range l.seen {
		if !addrs[a] {
			l.lost[a] = now
		}
	}
	for a := range addrs {
		delete(l.lost, a)
	}
	for len(l.lost) > statusHistory { // forget the oldest
		var oldest string
		for a, t := range l.lost {
			if oldest == "" || t.Before(l.lost[oldest]) {
				oldest = a
			}
		}
		delete(l.lost, oldest)
	}
	l.seen = addrs
}

// Status returns what the member knows of its cluster now.
func (m *Member) Status() Status {
	s := Status{Name: m.name, Address: m.Address(), State: MemberReady}
	if err := m.Ready(); err != nil {
		s.State, s.NotReady = MemberJoining, err.Error()
		select {
		case <-m.closed:
			s.State = MemberLeaving
		default:
		}
	}
	v := m.currentView()
	m.status.mu.Lock()
	for _, mem := range v.all {
		ms := MemberStatus{Address: mem.Address(), ID: mem.Id, State: MemberReady, Kinds: userKinds(mem.Kinds)}
		for _, n := range v.nodes {
			if n.addr == ms.Address {
				ms.AdvertisedDevices = n.devices
			}
		}
		if ms.Address == s.Address {
			ms.Self, ms.State = true, s.State
		}
		s.Members = append(s.Members, ms)
	}
	for a, t := range m.status.lost {
		s.Members = append(s.Members, MemberStatus{Address: a, State: MemberLost, Since: t, Kinds: []string{}})
	}
	identities := map[string][]string{}
	for kind, ids := range m.status.active {
		for id := range ids {
			identities[kind] = append(identities[kind], id)
		}
		sort.Strings(identities[kind])
	}
	n := len(m.status.moves)
	s.Moves = make([]PlacementMove, 0, n)
	for i := range n {
		s.Moves = append(s.Moves, m.status.moves[(m.status.next-n+i+statusHistory)%statusHistory])
	}
	m.status.mu.Unlock()
	var devices []string
	if m.rt != nil {
		for _, b := range m.rt.Backends() {
			if b.Available() == nil {
				devices = append(devices, b.Name())
			}
		}
	}
	self := false
	for i := range s.Members {
		if s.Members[i].Self {
			s.Members[i].Devices, s.Members[i].Identities, self = devices, identities, true
		}
	}
	if !self && !m.client { // not in the topology (yet, or any more)
		kinds := make([]string, 0, len(m.kinds))
		for k := range m.kinds {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		s.Members = append(s.Members, MemberStatus{Address: s.Address, State: s.State, Self: true, Kinds: kinds, Devices: devices, Identities: identities})
	}
	sort.Slice(s.Members, func(i, j int) bool { return s.Members[i].Address < s.Members[j].Address })
	return s
}
