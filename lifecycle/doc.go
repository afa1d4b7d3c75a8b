// Package lifecycle is the pure state machine that governs a ring kernel's
// life: it is launched, activated, deactivated, reactivated, may fault and be
// restarted, and is finally terminated.
//
// In the style of etcd-io/raft, the package performs no I/O and starts no
// goroutines: Transition maps a (State, Event) pair to the next State or to
// an ErrInvalidTransition, and the Command and Reply messages carry those
// values between actors. The caller owns the side effects.
package lifecycle
