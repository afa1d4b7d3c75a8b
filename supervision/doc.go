// Package supervision turns failures into directives. It holds the decider
// that classifies a failure (a handler that panicked, an error it returned, a
// device fault) and the restart strategy that Proto.Actor applies to ring
// kernel actors: exponential backoff between restarts, with an optional
// ceiling on restarts within a window after which the kernel is stopped.
package supervision
