package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/internal/bench"
)

// benchDevice runs the device measures of --device[=sim] on the machine's
// GPU ("auto") or the simulated device ("sim").
func benchDevice(ctx context.Context, mode string, quick bool, log *slog.Logger) (*bench.DeviceResult, error) {
	var b *cuda.Backend
	if mode == "sim" {
		cb, err := simulatedBackend()
		if err != nil {
			return nil, err
		}
		sb, ok := cb.(*cuda.Backend)
		if !ok {
			_ = cb.Close()
			return nil, errors.New("--device=sim: no simulated CUDA backend")
		}
		b = sb
	} else {
		b = cuda.NewBackend()
		if err := b.Available(); err != nil {
			_ = b.Close()
			return nil, fmt.Errorf("--device: %w", err)
		}
	}
	defer b.Close()
	cfg, bcfg := bench.FullDevice, bench.FullBudget
	if quick {
		cfg, bcfg = bench.QuickDevice, bench.QuickBudget
	}
	res, err := bench.RunDevice(ctx, b, cfg, log.Info)
	if err != nil {
		return nil, err
	}
	open := func(opts ...cuda.BackendOption) (*cuda.Backend, error) {
		b := cuda.NewBackend(opts...)
		if err := b.Available(); err != nil {
			_ = b.Close()
			return nil, err
		}
		return b, nil
	}
	if mode == "sim" {
		open = simulatedH200
	}
	if res.BudgetResult, err = bench.RunDeviceBudget(ctx, open, bcfg, log.Info); err != nil {
		return nil, fmt.Errorf("device budget: %w", err)
	}
	lcfg := bench.FullLanes
	if quick {
		lcfg = bench.QuickLanes
	}
	if res.LaneResult, err = bench.RunDeviceLanes(ctx, open, lcfg, log.Info); err != nil {
		return nil, fmt.Errorf("device lanes: %w", err)
	}
	return res, nil
}

// deviceTable formats the device measures.
func deviceTable(b *strings.Builder, d *bench.DeviceResult) {
	const row = "%-44s %14s\n"
	fmt.Fprintf(b, row, fmt.Sprintf("device (%d kernels, %d grid)", d.Kernels, d.Grids), "")
	fmt.Fprintf(b, row, "round trip p50, one kernel alone (ns)", count(float64(d.RTTAloneP50)))
	fmt.Fprintf(b, row, "round trip p50, one of many idle (ns)", count(float64(d.RTTOneOfManyP50)))
	fmt.Fprintf(b, row, "pipelined, 1 busy kernel (msg/s)", count(d.Pipelined1))
	fmt.Fprintf(b, row, "pipelined, 16 busy kernels (msg/s)", count(d.Pipelined16))
	fmt.Fprintf(b, row, "pipelined, 1024 busy kernels (msg/s)", count(d.Pipelined1024))
	fmt.Fprintf(b, row, "Go heap per kernel (bytes)", count(d.HostBytesPerBox))
	fmt.Fprintf(b, row, "pinned per mailbox (bytes)", count(d.PinnedBytesPerBx))
	fmt.Fprintf(b, row, "State bytes over the host link per message", count(d.StateLinkBytes))
	if l := d.LaneResult; l != nil {
		fmt.Fprintf(b, row, "device lane hop p50 (ns)", count(float64(l.LaneHopP50)))
		fmt.Fprintf(b, row, "host relay hop p50 (ns)", count(float64(l.HostRelayHopP50)))
		fmt.Fprintf(b, row, "lane chain, pipelined (msg/s)", count(l.LaneChainRate))
		fmt.Fprintf(b, row, "host-relayed chain, pipelined (msg/s)", count(l.HostRelayChainRate))
		fmt.Fprintf(b, row, "lane fan-in (msg/s)", count(l.FanInRate))
	}
	if g := d.BudgetResult; g != nil {
		fmt.Fprintf(b, row, "programs of 256-thread blocks placed", count(float64(g.ProgramsFit256)))
		fmt.Fprintf(b, row, "quiet round trip p50, alone (ns)", count(float64(g.RTTQuietAlone)))
		fmt.Fprintf(b, row, fmt.Sprintf("quiet round trip p50, %d saturated (ns)", g.SaturatedMailboxes), count(float64(g.RTTQuietAmongSaturated)))
		fmt.Fprintf(b, row, "device epoch during saturation (ms)", fmt.Sprintf("%.2f", g.EpochMsSaturated))
		fmt.Fprintf(b, row, "rings parked to register a program (ms)", fmt.Sprintf("%.2f", g.RegisterMsBesideRings))
	}
}
