package lifecycle

// next holds, for each (State, Event) pair, the next state plus one; zero
// marks an invalid pair. The offset keeps the zero value meaning "invalid"
// even though Created is the zero State.
var next = [numStates][numEvents]uint8{
	Created: {
		Launch:    uint8(Launched) + 1,
		Terminate: uint8(Terminated) + 1,
	},
	Launched: {
		Activate:  uint8(Active) + 1,
		Terminate: uint8(Terminated) + 1,
	},
	Active: {
		Deactivate: uint8(Deactivated) + 1,
		Terminate:  uint8(Terminated) + 1,
		Fault:      uint8(Failed) + 1,
	},
	Deactivated: {
		Reactivate: uint8(Active) + 1,
		Terminate:  uint8(Terminated) + 1,
	},
	Failed: {
		Restart:   uint8(Active) + 1,
		Terminate: uint8(Terminated) + 1,
	},
	Terminated: {},
}

// Transition returns the state a kernel in state s enters when event e
// happens. An invalid pair, including an unknown State or Event, returns s
// and an ErrInvalidTransition. The valid path does not allocate.
func Transition(s State, e Event) (State, error) {
	if int(s) < numStates && int(e) < numEvents {
		if n := next[s][e]; n != 0 {
			return State(n - 1), nil
		}
	}
	return s, ErrInvalidTransition{From: s, Event: e}
}
