package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
)

// Help text of the kernels command.
const (
	kernelsSynopsis    = "[-json]"
	kernelsDescription = `List the compute kernels registered in a fresh runtime (the names that
Runtime.Execute takes), sorted by name: how many input buffers each takes,
its scalar parameters with their defaults (name=default, in the order
WithScalars takes them), the dtypes of its primary input, the backends of
this machine that implement it for at least one of them, whether it is
elementwise (so that Map and out-of-memory recovery may split it) and a
one-line description.

Without -json the list is an aligned table; with -json stdout holds exactly
one JSON array of objects whose keys are: name, inputs, scalars (an array of
{name, default}), dtypes, backends, elementwise, description.
`
)

// kernelsCommand is the "kernels" subcommand.
var kernelsCommand = command{
	name:    "kernels",
	summary: "list the registered compute kernels: inputs, scalars, dtypes, backends",
	run:     runKernelsCommand,
}

// kernelInfo is one compute kernel as `ringactor kernels` shows it; the JSON
// names are the contract of `ringactor kernels --json`.
type kernelInfo struct {
	Name        string       `json:"name"`
	Inputs      int          `json:"inputs"`
	Scalars     []scalarInfo `json:"scalars"`
	DTypes      []string     `json:"dtypes"`
	Backends    []string     `json:"backends"`
	Elementwise bool         `json:"elementwise"`
	Description string       `json:"description"`
}

// scalarInfo is one scalar parameter of a kernel and its default.
type scalarInfo struct {
	Name    string  `json:"name"`
	Default float64 `json:"default"`
}

// runKernelsCommand parses the kernels command's flags and runs it.
func runKernelsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("kernels", kernelsSynopsis, kernelsDescription, stderr)
	asJSON := fs.Bool("json", false, "print the kernels as one JSON array on stdout instead of a table")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	log := fs.newLogger(false)
	infos, err := listKernels(ctx, actors.WithLogger(log), actors.WithTelemetry(false))
	if err == nil {
		err = writeKernels(stdout, infos, *asJSON)
	}
	if err != nil {
		return failure(stderr, "kernels", err)
	}
	return exitOK
}

// listKernels starts a runtime with opts, describes its compute kernels
// and closes it again.
func listKernels(ctx context.Context, opts ...actors.Option) (infos []kernelInfo, err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kernels: %w", err)
	}
	rt, err := actors.NewRuntime(opts...)
	if err != nil {
		return nil, fmt.Errorf("kernels: %w", err)
	}
	defer func() {
		// Close gets its own deadline: an interrupt must not leave the
		// runtime's actors running.
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if cerr := rt.Close(cctx); cerr != nil && err == nil {
			err = fmt.Errorf("kernels: close: %w", cerr)
		}
	}()
	return describeKernels(rt.ComputeKernels(), rt.Backends()), nil
}

// describeKernels turns specs into kernelInfos, naming for each the
// backends that support it for at least one of its dtypes.
func describeKernels(specs []*gpu.KernelSpec, backends []gpu.Backend) []kernelInfo {
	infos := make([]kernelInfo, 0, len(specs))
	for _, spec := range specs {
		info := kernelInfo{
			Name:        spec.Name,
			Inputs:      spec.Inputs,
			Scalars:     make([]scalarInfo, 0, len(spec.Scalars)),
			DTypes:      make([]string, 0, len(spec.DTypes)),
			Backends:    []string{},
			Elementwise: spec.Elementwise,
			Description: spec.Description,
		}
		for _, s := range spec.Scalars {
			info.Scalars = append(info.Scalars, scalarInfo{Name: s.Name, Default: s.Default})
		}
		for _, dt := range spec.DTypes {
			info.DTypes = append(info.DTypes, dt.String())
		}
		for _, b := range backends {
			for _, dt := range spec.DTypes {
				if b.Supports(spec, dt) {
					info.Backends = append(info.Backends, b.Name())
					break
				}
			}
		}
		infos = append(infos, info)
	}
	return infos
}

// writeKernels writes infos to w as one JSON array (and its newline) when
// asJSON, else as an aligned table.
func writeKernels(w io.Writer, infos []kernelInfo, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false) // descriptions hold "x > 0", not HTML
		return enc.Encode(infos)
	}
	_, err := io.WriteString(w, kernelsTable(infos))
	return err
}

// kernelsTable formats infos as an aligned table, one kernel a row.
func kernelsTable(infos []kernelInfo) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tINPUTS\tSCALARS\tDTYPES\tBACKENDS\tELEMENTWISE\tDESCRIPTION")
	for _, k := range infos {
		scalars := make([]string, len(k.Scalars))
		for i, s := range k.Scalars {
			scalars[i] = s.Name + "=" + strconv.FormatFloat(s.Default, 'g', -1, 64)
		}
		elementwise := "no"
		if k.Elementwise {
			elementwise = "yes"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", k.Name, k.Inputs, orDash(strings.Join(scalars, ",")),
			orDash(strings.Join(k.DTypes, ",")), orDash(strings.Join(k.Backends, ",")), elementwise, k.Description)
	}
	_ = tw.Flush() // a strings.Builder does not fail
	return b.String()
}

// orDash is s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
