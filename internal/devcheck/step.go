package devcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Status is a step's outcome.
type Status string

// The outcomes of a step.
const (
	Pass Status = "pass" // every check held
	Fail Status = "fail" // a check did not hold, or the step could not run
	Skip Status = "skip" // the step does not apply here (Reason says why)
)

// Step is one scenario: a check, or a measurement that also checks what it
// measures.
type Step struct {
	// Name is what --only takes, e.g. "hazards".
	Name string
	// Checks is a one-line description of what the step verifies.
	Checks string
	// Timeout is the step's budget on a real device; on the simulated
	// device it is multiplied by [SimTimeoutScale]. A step that runs past
	// it is killed.
	Timeout time.Duration
	// Hidden steps are not run unless named with --only (test hooks).
	Hidden bool
	// run runs the step; figures it records go into its report.
	run func(ctx context.Context, e *Env) error
}

// SimTimeoutScale multiplies a step's timeout on the simulated device,
// whose kernels are host threads on a shared machine.
const SimTimeoutScale = 4

// HangStepEnv, set to 1 in the environment, adds the hidden step "hang",
// which blocks forever: the tests use it to check that a hung step is
// killed and its goroutines' stacks reported.
const HangStepEnv = "RINGACTOR_SELFTEST_HANG_STEP"

// Steps returns the scenarios in the order they run: the report first, the
// device fault last (a fault is sticky for the whole context).
func Steps() []Step {
	steps := []Step{
		reportStep,
		hazardsStep,
		hazardModelStep,
		visibilityStep,
		oneshotStep,
		userKernelsStep,
		restartStep,
		rttStep,
		executeBesideStep,
		epochStep,
		wakeStep,
		scaleStep,
		lanesStep,
		faultStep,
	}
	if os.Getenv(HangStepEnv) == "1" {
		steps = append(steps, hangStep)
	}
	return steps
}

// Lookup returns the step named name.
func Lookup(name string) (Step, bool) {
	i := slices.IndexFunc(Steps(), func(s Step) bool { return s.Name == name })
	if i < 0 {
		return Step{}, false
	}
	return Steps()[i], true
}

// Result is what one step found.
type Result struct {
	Name    string         `json:"name"`
	Status  Status         `json:"status"`
	Reason  string         `json:"reason,omitempty"`
	Seconds float64        `json:"seconds"`
	Figures map[string]any `json:"figures,omitempty"`
}

// SkipError ends a step as skipped; see [Skipf].
type SkipError struct{ Reason string }

// Error implements error.
func (e *SkipError) Error() string { return "skipped: " + e.Reason }

// Skipf returns the error that ends a step as skipped with the reason.
func Skipf(format string, args ...any) error {
	return &SkipError{Reason: fmt.Sprintf(format, args...)}
}

// Config says where and how a step runs.
type Config struct {
	Sim   bool      // the simulated device instead of CUDA device 0
	Quick bool      // shorter runs and smaller sizes
	Log   io.Writer // progress lines (what the step is doing); nil: none
}

// Run runs step s in this process under ctx and returns its result: pass,
// fail with the error as reason (a panic is a failure too), or skip.
func Run(ctx context.Context, s Step, cfg Config) (res Result) {
	e := newEnv(cfg)
	start := time.Now()
	res.Name = s.Name
	defer func() {
		if p := recover(); p != nil {
			res.Status, res.Reason = Fail, fmt.Sprintf("panic: %v\n%s", p, debug.Stack())
		}
		if err := e.close(); err != nil && res.Status == Pass {
			res.Status, res.Reason = Fail, "cleaning up: "+err.Error()
		}
		res.Seconds = time.Since(start).Seconds()
		if len(e.figures) > 0 {
			res.Figures = e.figures
		}
	}()
	err := s.run(ctx, e)
	var se *SkipError
	switch {
	case err == nil:
		res.Status = Pass
		if len(e.skipped) > 0 {
			e.Set("skipped_checks", e.skipped)
		}
	case errors.As(err, &se):
		res.Status, res.Reason = Skip, se.Reason
	default:
		res.Status, res.Reason = Fail, err.Error()
	}
	return res
}

// Names lists the steps' names, comma-separated.
func Names() string {
	var names []string
	for _, s := range Steps() {
		if !s.Hidden {
			names = append(names, s.Name)
		}
	}
	return strings.Join(names, ",")
}

// hangStep blocks until its context ends (the parent's kill): a hung
// driver call as the parent sees it.
var hangStep = Step{
	Name: "hang", Checks: "(test hook) blocks forever", Timeout: 2 * time.Second, Hidden: true,
	run: func(ctx context.Context, e *Env) error {
		e.Progress("hanging until killed")
		hangForever()
		return nil
	},
}

// hangForever blocks without a way out, as a wedged driver call does (a
// sleeping loop, so the runtime's deadlock detector stays quiet).
func hangForever() {
	for {
		time.Sleep(time.Hour)
	}
}
