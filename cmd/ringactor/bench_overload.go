package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ringactor/ringactor/internal/bench"
)

// Help text of the bench overload command.
const (
	benchOverloadSynopsis    = "overload [-kind cpu|stateful|device] [-duration D] [-factor F] [-json]"
	benchOverloadDescription = `Overload a member: measure the capacity of a kind's identities with a
closed-loop run, then offer -factor times that rate open loop for -duration,
then measure how soon the member serves at its capacity again. The hosting
member and the member sending the load run in this process, joined over
loopback (every request crosses the network path); memory figures are this
process's. -kind device runs a device kind on the simulated device.

Printed: the capacity, the offered rate, the outcomes by error type
(accepted, ErrOverloaded, ErrTimeout, ErrMemberUnavailable, other), late
outcomes (after the deadline and a margin), accepted p50/p99 against the
documented bound (each identity holds at most 3 × its ring capacity + 64
requests), the most requests in flight, heap and resident memory before and
at peak, and the recovery time. With -json stdout holds one JSON object.
`
)

// runBenchOverload runs `ringactor bench overload`.
func runBenchOverload(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench overload", benchOverloadSynopsis, benchOverloadDescription, stderr)
	cfg := bench.DefaultOverload
	fs.StringVar(&cfg.Kind, "kind", cfg.Kind, "the kind overloaded: cpu (NewKind), stateful (NewStatefulKind) or device (NewDeviceKind, simulated device)")
	fs.DurationVar(&cfg.Overload, "duration", cfg.Overload, "how long the open-loop overload lasts")
	fs.Float64Var(&cfg.Factor, "factor", cfg.Factor, "the offered rate over the measured capacity")
	fs.DurationVar(&cfg.Measure, "measure", cfg.Measure, "how long the closed-loop capacity run lasts")
	fs.IntVar(&cfg.Identities, "identities", cfg.Identities, "identities the requests spread over")
	fs.IntVar(&cfg.Capacity, "capacity", cfg.Capacity, "ring capacity of each identity's kernel")
	fs.DurationVar(&cfg.Work, "work", cfg.Work, "cpu and stateful kinds: the handler's work per request")
	fs.BoolVar(&cfg.Spin, "spin", false, "the handler's work is a busy loop (CPU time) instead of a sleep")
	fs.DurationVar(&cfg.Deadline, "deadline", cfg.Deadline, "each request's deadline")
	asJSON := fs.Bool("json", false, "print the result as one JSON object on stdout")
	verbose := fs.Bool("v", false, "log at debug level")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	log := fs.newLogger(*verbose)
	cfg.Progress = log.Info
	if cfg.Kind == bench.OverloadDevice {
		b, err := simulatedBackend()
		if err != nil {
			return failure(stderr, "bench overload", err)
		}
		defer b.Close()
		cfg.Backend = b
	}
	res, err := bench.RunOverload(ctx, cfg)
	if err != nil {
		return failure(stderr, "bench overload", err)
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return failure(stderr, "bench overload", err)
		}
		return exitOK
	}
	_, _ = io.WriteString(stdout, overloadTable(res, cfg))
	return exitOK
}

// overloadTable formats an overload run's result.
func overloadTable(r bench.OverloadResult, cfg bench.OverloadConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ringactor bench overload: kind %s, %d identities, rings of %d, deadline %v, GOMAXPROCS=%d, load %s\n",
		r.Kind, r.Identities, r.RingCap, cfg.Deadline, r.GoMaxProcs, r.LoadAvg)
	fmt.Fprintf(&b, "member: %s\n\n", r.MemberInThisOS)
	const row = "%-40s %s\n"
	fmt.Fprintf(&b, row, "capacity, closed loop (req/s)", count(r.CapacityPS))
	fmt.Fprintf(&b, row, fmt.Sprintf("offered, open loop for %.0f s (req/s)", r.DurationS), count(r.OfferedPS))
	fmt.Fprintf(&b, row, "sent", count(float64(r.Sent)))
	fmt.Fprintf(&b, row, "  accepted (answered)", fmt.Sprintf("%s (%s/s)", count(float64(r.Accepted)), count(r.AcceptedPS)))
	fmt.Fprintf(&b, row, "  refused, ErrOverloaded", count(float64(r.Refused)))
	fmt.Fprintf(&b, row, "  ErrTimeout", count(float64(r.TimedOut)))
	fmt.Fprintf(&b, row, "  ErrMemberUnavailable", count(float64(r.Unavailable)))
	fmt.Fprintf(&b, row, "  other errors", count(float64(r.Other)))
	fmt.Fprintf(&b, row, "  without an outcome", count(float64(r.Missing)))
	fmt.Fprintf(&b, row, "  later than deadline + margin", count(float64(r.Late)))
	fmt.Fprintf(&b, row, "accepted p50 / p99 (ms)", fmt.Sprintf("%.1f / %.1f (bound %.0f)", r.AcceptedP50MS, r.AcceptedP99MS, r.P99BoundMS))
	fmt.Fprintf(&b, row, "refused p99 (ms)", fmt.Sprintf("%.2f", r.RefusalP99MS))
	fmt.Fprintf(&b, row, "longest wait for an outcome (ms)", fmt.Sprintf("%.0f", r.MaxWaitMS))
	fmt.Fprintf(&b, row, "most in flight", fmt.Sprintf("%s (bound %s)", count(float64(r.MaxInFlight)), count(float64(r.InFlightBound))))
	fmt.Fprintf(&b, row, "Go heap in use before / peak (MiB)", fmt.Sprintf("%.1f / %.1f", r.HeapBeforeMB, r.HeapPeakMB))
	fmt.Fprintf(&b, row, "RSS before / peak, VmHWM (MiB)", fmt.Sprintf("%.1f / %.1f, %.1f", r.RSSBeforeMB, r.RSSPeakMB, r.VmHWMMB))
	rec := "not within " + cfg.RecoveryLimit.String()
	if r.Recovered {
		rec = fmt.Sprintf("%.2f s (%s req/s)", r.RecoveryS, count(r.RecoveredPS))
	}
	fmt.Fprintf(&b, row, "back at ≥ 90% of capacity after", rec)
	return b.String()
}
