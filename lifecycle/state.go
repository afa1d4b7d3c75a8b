package lifecycle

// State is a ring kernel's lifecycle state. The zero value is Created.
type State uint8

// The lifecycle states of a ring kernel.
const (
	// Created is the initial state: the kernel is described but not launched.
	Created State = iota
	// Launched means the kernel's persistent loop runs on the device but its
	// gate is closed: messages queue in the ring without being processed.
	Launched
	// Active means the gate is open and the kernel processes messages.
	Active
	// Deactivated means the gate was closed again; messages queue behind it.
	Deactivated
	// Failed means the kernel faulted while active and awaits a restart.
	Failed
	// Terminated is the terminal state: the kernel and its ring are released.
	Terminated

	numStates = int(Terminated) + 1
)

var stateNames = [numStates]string{
	Created:     "created",
	Launched:    "launched",
	Active:      "active",
	Deactivated: "deactivated",
	Failed:      "failed",
	Terminated:  "terminated",
}

// States returns every State in declaration order.
func States() []State {
	out := make([]State, numStates)
	for i := range out {
		out[i] = State(i)
	}
	return out
}

// String returns the lower-case name of s, or "state(N)" for an unknown value.
func (s State) String() string {
	if int(s) < numStates {
		return stateNames[s]
	}
	return "state(" + itoa(uint8(s)) + ")"
}

// CanReceive reports whether a kernel in state s accepts messages into its
// ring. In Launched and Deactivated they queue behind the closed gate.
func (s State) CanReceive() bool {
	return s == Launched || s == Active || s == Deactivated
}

// Processing reports whether a kernel in state s processes messages, which
// is true only when it is Active.
func (s State) Processing() bool { return s == Active }

// Terminal reports whether s is Terminated, from which no event leads out.
func (s State) Terminal() bool { return s == Terminated }

// itoa formats a small unsigned integer without importing strconv.
func itoa(v uint8) string {
	if v == 0 {
		return "0"
	}
	var buf [3]byte
	i := len(buf)
	for v > 0 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return string(buf[i:])
}
