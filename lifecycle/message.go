package lifecycle

// Command asks a kernel actor to apply a lifecycle Event.
type Command struct {
	// Event is the event to apply.
	Event Event
}

// Reply is a kernel actor's answer to a Command.
type Reply struct {
	// From is the state before the command.
	From State
	// To is the state after it; equal to From when Err is set.
	To State
	// Err is nil on success, or why the command was refused.
	Err error
}
