package lifecycle

// Event is something that happens to a ring kernel and may change its State.
type Event uint8

// The lifecycle events of a ring kernel.
const (
	// Launch starts the kernel's persistent loop with its gate closed.
	Launch Event = iota
	// Activate opens the gate of a launched kernel.
	Activate
	// Deactivate closes the gate of an active kernel.
	Deactivate
	// Reactivate reopens the gate of a deactivated kernel.
	Reactivate
	// Terminate stops the kernel and releases its resources.
	Terminate
	// Fault reports that an active kernel failed.
	Fault
	// Restart brings a failed kernel back to Active.
	Restart

	numEvents = int(Restart) + 1
)

var eventNames = [numEvents]string{
	Launch:     "launch",
	Activate:   "activate",
	Deactivate: "deactivate",
	Reactivate: "reactivate",
	Terminate:  "terminate",
	Fault:      "fault",
	Restart:    "restart",
}

// Events returns every Event in declaration order.
func Events() []Event {
	out := make([]Event, numEvents)
	for i := range out {
		out[i] = Event(i)
	}
	return out
}

// String returns the lower-case name of e, or "event(N)" for an unknown value.
func (e Event) String() string {
	if int(e) < numEvents {
		return eventNames[e]
	}
	return "event(" + itoa(uint8(e)) + ")"
}
