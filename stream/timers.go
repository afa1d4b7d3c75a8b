package stream

import (
	"container/heap"
	"sync"
	"time"
)

// Timer is a processing-time timer that has become due: when it was set for
// and the tag it was set with.
type Timer struct {
	At  time.Time
	Tag uint64
}

// timers are one stage instance's processing-time timers. They are set and
// fired on the instance's loop; one time.Timer for the earliest sends the
// instance a timer packet when it is due, through its ring like any other
// message.
type timers struct {
	h    timerHeap
	fire func()      // sends the timer packet
	next time.Time   // when t is set for; zero: not armed
	t    *time.Timer // armed for the earliest timer

	mu      sync.Mutex // guards stopped and the firing goroutines' count
	stopped bool
	wg      sync.WaitGroup
}

// SetTimer asks for Timer{at, tag} to be given to the stage's Timer function,
// on its loop, once at has passed. Timers of an instance that has drained or
// stopped do not fire.
func (c *Context) SetTimer(at time.Time, tag uint64) {
	if c.timers == nil {
		return
	}
	heap.Push(&c.timers.h, Timer{At: at, Tag: tag})
	c.timers.arm()
}

// arm (re)starts the time.Timer for the earliest timer.
func (ts *timers) arm() {
	if len(ts.h) == 0 {
		return
	}
	at := ts.h[0].At
	if !ts.next.IsZero() && !at.Before(ts.next) {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.stopped {
		return
	}
	ts.next = at
	d := time.Until(at)
	if ts.t == nil {
		ts.t = time.AfterFunc(d, ts.ring)
		return
	}
	ts.t.Reset(d)
}

// ring runs on the time.Timer's goroutine: it sends the timer packet unless
// the timers have stopped.
func (ts *timers) ring() {
	ts.mu.Lock()
	if ts.stopped {
		ts.mu.Unlock()
		return
	}
	ts.wg.Add(1)
	ts.mu.Unlock()
	defer ts.wg.Done()
	ts.fire()
}

// due pops the timers that are due at now; the loop calls it on a timer
// packet, then arms the next.
func (ts *timers) due(now time.Time, f func(Timer)) {
	ts.next = time.Time{}
	for len(ts.h) > 0 && !ts.h[0].At.After(now) {
		f(heap.Pop(&ts.h).(Timer))
	}
	ts.arm()
}

// stop ends the timers and waits for a firing in progress.
func (ts *timers) stop() {
	ts.mu.Lock()
	ts.stopped = true
	if ts.t != nil {
		ts.t.Stop()
	}
	ts.mu.Unlock()
	ts.wg.Wait()
}

// timerHeap is a min-heap of timers by due time.
type timerHeap []Timer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].At.Before(h[j].At) }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(Timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}
