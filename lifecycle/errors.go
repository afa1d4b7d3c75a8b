package lifecycle

import "errors"

// ErrTransition is the sentinel that every ErrInvalidTransition matches
// under errors.Is.
var ErrTransition = errors.New("lifecycle: invalid transition")

// ErrInvalidTransition reports an Event that is not allowed in a State.
// Match it with errors.As to read the pair, or with errors.Is against
// ErrTransition.
type ErrInvalidTransition struct {
	// From is the state the kernel was in.
	From State
	// Event is the event that was refused.
	Event Event
}

// Error describes the refused transition.
func (e ErrInvalidTransition) Error() string {
	return "lifecycle: invalid transition: cannot " + e.Event.String() +
		" a kernel that is " + e.From.String()
}

// Is reports whether target is ErrTransition.
func (e ErrInvalidTransition) Is(target error) bool {
	return target == ErrTransition
}
