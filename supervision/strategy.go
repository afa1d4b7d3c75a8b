package supervision

import (
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Strategy is a Proto.Actor supervisor strategy for ring kernel actors. Each
// failing child is handled on its own (one-for-one): the decider picks the
// directive; a restart waits Backoff.Delay(n), where n counts the child's
// failures within Window; when MaxRestarts > 0 and the child failed more than
// that many times within Window, it is stopped instead.
type Strategy struct {
	Decider     Decider
	Backoff     Backoff
	Window      time.Duration
	MaxRestarts int
	// Logger receives restarts (debug) and stops (warn); nil logs through
	// the actor system's logger (ActorSystem.Logger), never slog.Default.
	Logger *slog.Logger
}

// Option configures a Strategy.
type Option func(*Strategy)

// WithDecider sets the decider (default DefaultDecider).
func WithDecider(d Decider) Option { return func(s *Strategy) { s.Decider = d } }

// WithBackoff sets the backoff between restarts (default DefaultBackoff).
func WithBackoff(b Backoff) Option { return func(s *Strategy) { s.Backoff = b } }

// WithMaxRestarts stops a child that failed more than n times within window;
// n = 0 (the default) never gives up. The window also resets the backoff: a
// child that has not failed for a window starts again at Backoff.Initial.
func WithMaxRestarts(n int, window time.Duration) Option {
	return func(s *Strategy) { s.MaxRestarts, s.Window = n, window }
}

// WithLogger sets the logger restarts and stops are reported to (default:
// the supervising actor system's logger, which a ringactor runtime makes
// from its own).
func WithLogger(l *slog.Logger) Option { return func(s *Strategy) { s.Logger = l } }

// NewStrategy returns the default strategy (exponential backoff, never give
// up, failure count reset after 10 s without failures) with opts applied.
func NewStrategy(opts ...Option) *Strategy {
	s := &Strategy{Decider: DefaultDecider, Backoff: DefaultBackoff, Window: 10 * time.Second}
	for _, o := range opts {
		o(s)
	}
	return s
}

var _ actor.SupervisorStrategy = (*Strategy)(nil)

// Directed is a failure that carries its own directive: the decision of
// the failed kernel's own decider (actors.WithDecider), which takes
// precedence over the strategy's Decider.
type Directed struct {
	Err       error
	Directive Directive
}

// Error implements error.
func (d *Directed) Error() string { return d.Err.Error() }

// Unwrap returns the failure.
func (d *Directed) Unwrap() error { return d.Err }

// HandleFailure implements actor.SupervisorStrategy.
func (s *Strategy) HandleFailure(system *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, rs *actor.RestartStatistics, reason any, message any) {
	var directive Directive
	if d, ok := reason.(*Directed); ok {
		directive = d.Directive
	} else {
		directive = s.Decider(reason)
	}
	if directive == Restart {
		if rs.NumberOfFailures(s.Window) == 0 {
			rs.Reset()
		}
		rs.Fail()
		if s.MaxRestarts > 0 && rs.NumberOfFailures(s.Window) > s.MaxRestarts {
			directive = Stop
		}
	}
	logger := s.Logger
	if logger == nil {
		logger = system.Logger()
	}
	publish := func() {
		system.EventStream.Publish(&actor.SupervisorEvent{Child: child, Reason: reason, Directive: directive})
	}
	switch directive {
	case Resume:
		publish()
		sup.ResumeChildren(child)
	case Restart:
		delay := s.Backoff.Delay(rs.NumberOfFailures(s.Window))
		logger.Debug("ringactor: restarting kernel actor", "actor", child.Id, "after", delay, "error", reason)
		time.AfterFunc(delay, func() {
			publish()
			sup.RestartChildren(child)
		})
	case Stop:
		logger.Warn("ringactor: stopping kernel actor", "actor", child.Id, "error", reason)
		publish()
		sup.StopChildren(child)
	default:
		publish()
		sup.EscalateFailure(reason, message)
	}
}
