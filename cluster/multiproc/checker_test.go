package multiproc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/messages"
)

// The tracked kind and the activation checker of the network-fault tests
// (netfault_test.go). Every activation of the tracked kind writes, to a
// file of its member's own in the folder eventsEnv names, one line when it
// starts ("S"), one per request it handles ("H") and one when it ends
// ("E"): "S|H|E identity activation unix_ns". The checker reads every
// member's file after the run. All the processes run on one machine, so
// their wall clocks are the same clock.
const eventsEnv = "RINGACTOR_NETFAULT_EVENTS"

// Track asks an activation of the tracked kind to count one more request.
type Track struct{ Seq int64 }

// Tracked is the tracked kind's reply: the activation that handled the
// request and its count (carried across moves by the stateful hand-off).
type Tracked struct {
	Activation string
	Count      int64
}

func init() {
	messages.MustRegister[Track]("ringactor.multiproc.Track")
	messages.MustRegister[Tracked]("ringactor.multiproc.Tracked")
}

// eventLog is a member's file of activation events: each line is one
// write on a file opened for appending, so a member that is killed loses
// none that it wrote.
type eventLog struct {
	once sync.Once
	mu   sync.Mutex
	f    *os.File
}

var (
	events      eventLog
	activations atomic.Int64
)

// write appends one event, when eventsEnv names a folder.
func (l *eventLog) write(ev byte, id, act string) {
	l.once.Do(func() {
		if dir := os.Getenv(eventsEnv); dir != "" {
			f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("events-%d.log", os.Getpid())), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				fmt.Fprintln(os.Stderr, "events:", err)
				return
			}
			l.f = f // left open: the process's exit closes it
		}
	})
	if l.f == nil {
		return
	}
	line := fmt.Sprintf("%c %s %s %d\n", ev, id, act, time.Now().UnixNano())
	l.mu.Lock()
	_, _ = l.f.WriteString(line)
	l.mu.Unlock()
}

// trackedKind is the kind the network-fault tests drive: a stateful
// counter whose activations report their start, every request and their
// end to the member's event log.
func trackedKind() *cluster.Kind {
	return cluster.NewStatefulKind("tracked", func(identity string, state []byte) (cluster.Stateful[Track, Tracked], error) {
		a := &trackedActivation{id: identity, act: fmt.Sprintf("%s/%d/%d", self(), os.Getpid(), activations.Add(1))}
		if len(state) > 0 {
			_, _ = fmt.Sscan(string(state), &a.count)
		}
		events.write('S', a.id, a.act)
		return a, nil
	})
}

type trackedActivation struct {
	id, act string
	count   int64
}

func (a *trackedActivation) Handle(context.Context, Track) (Tracked, error) {
	events.write('H', a.id, a.act)
	a.count++
	return Tracked{Activation: a.act, Count: a.count}, nil
}

func (a *trackedActivation) Passivate() ([]byte, error) {
	events.write('E', a.id, a.act)
	return fmt.Appendf(nil, "%d", a.count), nil
}

// span is what the checker knows of one activation: when it started,
// handled its first and last request, and ended (0: not seen), and when it
// handled each request.
type span struct {
	id, act                   string
	start, first, last, ended int64
	handles                   []int64
}

// serving returns the interval in which the activation served: from its
// start to its last request (its start alone when it handled none).
func (s *span) serving() (int64, int64) { return s.start, max(s.last, s.start) }

// readSpans reads the event logs in dir, by identity.
func readSpans(t *testing.T, dir string) map[string][]*span {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "events-*.log"))
	if err != nil {
		t.Fatal(err)
	}
	byAct := map[string]*span{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var ev, id, act string
			var at int64
			if _, err := fmt.Sscanf(sc.Text(), "%s %s %s %d", &ev, &id, &act, &at); err != nil {
				// A member killed in the middle of a write leaves half a
				// line at its end; nothing else is malformed.
				t.Logf("%s: %q: %v", name, sc.Text(), err)
				continue
			}
			s := byAct[act]
			if s == nil {
				s = &span{id: id, act: act}
				byAct[act] = s
			}
			switch ev {
			case "S":
				s.start = at
			case "H":
				if s.first == 0 || at < s.first {
					s.first = at
				}
				s.last = max(s.last, at)
				s.handles = append(s.handles, at)
			case "E":
				s.ended = at
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string][]*span{}
	for _, s := range byAct {
		if s.start == 0 { // its start line lost: from its first request
			s.start = s.first
		}
		slices.Sort(s.handles)
		out[s.id] = append(out[s.id], s)
	}
	for _, ss := range out {
		sort.Slice(ss, func(i, j int) bool { return ss[i].start < ss[j].start })
	}
	return out
}

// overlap is a time during which two activations of one identity both
// served: each had started, and each handled a request after the other
// had started.
type overlap struct {
	id         string
	a, b       string
	from, till int64
}

// doubles returns every pair of activations of one identity whose serving
// intervals overlap. An activation that a fenced member keeps without
// serving (it answers "moved" until it passivates) does not count: it
// serves nothing after its last request.
func doubles(spans map[string][]*span) []overlap {
	var out []overlap
	for id, ss := range spans {
		for i, a := range ss {
			for _, b := range ss[i+1:] {
				as, ae := a.serving()
				bs, be := b.serving()
				from, till := max(as, bs), min(ae, be)
				if from < till {
					out = append(out, overlap{id: id, a: a.act, b: b.act, from: from, till: till})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].from < out[j].from })
	return out
}

// lastServedOn returns the last time an activation of the member at addr
// handled a request within [from, till], and whether one did.
func lastServedOn(spans map[string][]*span, addr string, from, till int64) (int64, bool) {
	var last int64
	found := false
	for _, ss := range spans {
		for _, s := range ss {
			if !strings.HasPrefix(s.act, addr+"/") {
				continue
			}
			// The last request at or before till.
			i, _ := slices.BinarySearch(s.handles, till+1)
			if i > 0 && s.handles[i-1] >= from && (!found || s.handles[i-1] > last) {
				last, found = s.handles[i-1], true
			}
		}
	}
	return last, found
}
