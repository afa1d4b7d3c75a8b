package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ringactor/ringactor/admin"
)

// Help text of the top command.
const (
	topSynopsis    = "--admin ADDR [--interval D] [--once] [--json]"
	topDescription = `Show every ring kernel of a running member (or any process serving the
admin endpoint) from its /kernels: state, placement, messages processed per
second, processed, errors, dropped, queue depth, p50 and p99 latency
(admission to the end of handling) and restarts. The view is redrawn in
place every --interval until SIGINT or SIGTERM (exit status 0); when
stdout is not a terminal the views follow one another, a blank line apart,
without terminal control codes. --once
prints one view and exits; the rates are measured over one --interval.
--json (with --once) prints one JSON object instead: the /kernels snapshot
with "processed_per_s" for each kernel.
`
)

// topCommand is the "top" subcommand.
var topCommand = command{
	name:    "top",
	summary: "live view of a member's ring kernels (rates, depths, latency percentiles) from its admin endpoint",
	run:     runTopCommand,
}

// clearScreen moves the cursor home and clears the terminal: each view is
// drawn in place of the last.
const clearScreen = "\x1b[H\x1b[2J"

// runTopCommand parses the top command's flags and runs the view.
func runTopCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("top", topSynopsis, topDescription, stderr)
	addr := fs.String("admin", "", "admin endpoint of the member, `ADDR` (PORT means 127.0.0.1:PORT; required)")
	interval := fs.Duration("interval", time.Second, "refresh period, and the window of the rates")
	once := fs.Bool("once", false, "print one view and exit")
	asJSON := fs.Bool("json", false, "with --once: print one JSON object")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	switch {
	case *addr == "":
		return usageError(fs, "--admin is required")
	case *interval <= 0:
		return usageError(fs, "--interval must be positive")
	case *asJSON && !*once:
		return usageError(fs, "--json needs --once")
	}
	a, err := admin.ListenAddress(*addr)
	if err != nil {
		return usageError(fs, "--admin: %v", err)
	}
	c := &topClient{url: "http://" + a + "/kernels", http: &http.Client{Timeout: 5 * time.Second}}
	defer c.http.CloseIdleConnections()
	if *once {
		err = c.once(ctx, stdout, *interval, *asJSON)
	} else {
		err = c.live(ctx, stdout, *interval)
		if errors.Is(err, context.Canceled) {
			return exitOK // SIGINT is how a live view ends
		}
	}
	if err != nil {
		return failure(stderr, "top", err)
	}
	return exitOK
}

// topClient reads a member's /kernels.
type topClient struct {
	url  string
	http *http.Client
}

// fetch reads one snapshot.
func (c *topClient) fetch(ctx context.Context) (admin.Snapshot, error) {
	var s admin.Snapshot
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return s, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("%s: %s", c.url, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&s); err != nil {
		return s, fmt.Errorf("%s: %w", c.url, err)
	}
	return s, nil
}

// topKernel is a kernel of the view: its snapshot and its rate.
type topKernel struct {
	admin.Kernel
	ProcessedPerS float64 `json:"processed_per_s"`
}

// topView is the JSON form of --once --json.
type topView struct {
	Time    time.Time   `json:"time"`
	Kernels []topKernel `json:"kernels"`
}

// rates joins cur with the rates since prev (zero for a kernel prev lacks,
// or one whose counters went back: a restart of the member).
func rates(prev, cur admin.Snapshot) topView {
	before := make(map[string]admin.Kernel, len(prev.Kernels))
	for _, k := range prev.Kernels {
		before[k.Name] = k
	}
	dt := cur.Time.Sub(prev.Time).Seconds()
	v := topView{Time: cur.Time, Kernels: make([]topKernel, 0, len(cur.Kernels))}
	for _, k := range cur.Kernels {
		tk := topKernel{Kernel: k}
		if p, ok := before[k.Name]; ok && dt > 0 && k.Processed >= p.Processed {
			tk.ProcessedPerS = float64(k.Processed-p.Processed) / dt
		}
		v.Kernels = append(v.Kernels, tk)
	}
	return v
}

// once prints one view, its rates over interval.
func (c *topClient) once(ctx context.Context, w io.Writer, interval time.Duration, asJSON bool) error {
	prev, err := c.fetch(ctx)
	if err != nil {
		return err
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	cur, err := c.fetch(ctx)
	if err != nil {
		return err
	}
	v := rates(prev, cur)
	if asJSON {
		return json.NewEncoder(w).Encode(v)
	}
	_, err = io.WriteString(w, topTable(v, c.url))
	return err
}

// live redraws the view every interval until ctx ends. A failed fetch is
// shown in the view and retried. When w is not a terminal (a file, a pipe)
// the views follow one another, a blank line apart, without the control
// codes that redraw a terminal in place.
func (c *topClient) live(ctx context.Context, w io.Writer, interval time.Duration) error {
	clear, between := clearScreen, ""
	if !isTerminal(w) {
		clear = ""
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var prev admin.Snapshot
	for {
		cur, err := c.fetch(ctx)
		var screen string
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			screen = fmt.Sprintf("ringactor top  %s  %s\n\n%v\n", c.url, time.Now().Format(time.TimeOnly), err)
		default:
			screen = topTable(rates(prev, cur), c.url)
			prev = cur
		}
		if _, err := io.WriteString(w, between+clear+screen); err != nil {
			return err
		}
		if clear == "" {
			between = "\n"
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// topTable formats a view as an aligned table.
func topTable(v topView, url string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ringactor top  %s  %s  %d kernels\n\n", url, v.Time.Format(time.TimeOnly), len(v.Kernels))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "KERNEL\tSTATE\tPLACEMENT\tPROC/S\tPROCESSED\tERRORS\tDROPPED\tDEPTH\tP50\tP99\tRESTARTS\t")
	for _, k := range v.Kernels {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t\n", k.Name, k.State, k.Placement, k.ProcessedPerS,
			k.Processed, k.Errors, k.Dropped, k.Depth, nanos(k.Latency.P50, k.Latency.Count), nanos(k.Latency.P99, k.Latency.Count), k.Restarts)
	}
	_ = tw.Flush()
	return b.String()
}

// nanos formats a latency percentile, "-" when nothing was measured.
func nanos(ns int64, n uint64) string {
	if n == 0 {
		return "-"
	}
	return time.Duration(ns).Round(time.Duration(max(ns/100, 1))).String()
}
