package sensor

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// RejectOverflow is Reading.Reject for a row whose scaled value overflows
// float64: V keeps the value before scaling, and the reason is written
// from it.
const RejectOverflow = math.MaxUint32

// runTable is what a graph run's parse stage shares with the stages after
// it, so that a Reading holds no pointer: the sensor names by id, and the
// reasons of the rows parse rejected by their Reading.Reject number until
// the rejects sink takes them.
type runTable struct {
	names atomic.Pointer[[]string] // by sensor id; replaced, never changed, when parse adds one

	mu      sync.Mutex
	reasons map[uint32]string // not yet taken
	next    uint32            // the last number handed out
}

// newRunTable returns an empty table.
func newRunTable() *runTable {
	t := &runTable{reasons: make(map[uint32]string)}
	t.names.Store(new([]string))
	return t
}

// addName appends the name of the next sensor id. Names are few: each
// one copies the list, so that readers never see it change.
func (t *runTable) addName(name string) {
	s := append(slices.Clip(*t.names.Load()), name)
	t.names.Store(&s)
}

// sensorNames is the names by id: every id of a reading received is in it
// (parse adds the name before it emits the reading).
func (t *runTable) sensorNames() []string { return *t.names.Load() }

// putReason keeps reason and returns its number for Reading.Reject: never
// 0 or RejectOverflow, and not one still kept (the numbers wrap after
// some four billion, long after the sink has taken the old ones).
func (t *runTable) putReason(reason string) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		t.next++
		if t.next == 0 || t.next == RejectOverflow {
			continue
		}
		if _, used := t.reasons[t.next]; !used {
			break
		}
	}
	t.reasons[t.next] = reason
	return t.next
}

// takeReason returns the reason numbered n and forgets it.
func (t *runTable) takeReason(n uint32) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.reasons[n]
	delete(t.reasons, n)
	return r
}
