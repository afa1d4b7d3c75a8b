package devcore

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// h200 is an H200's residency limits (the same per SM as an H100).
var h200 = BudgetLimits{SMs: 132, ResidentGrids: 128, BlocksPerSM: 32, ThreadsPerSM: 2048, RegistersPerSM: 64 << 10,
	SharedMemPerSM: 228 << 10, SharedMemReservedPerBlock: 1 << 10}

// TestBudgetProgramsFit: how many program grids of one block per SM fit
// an H200 beside the default reserve, by block size; the next is refused
// with the limit that ran out, and a one-shot block of the reserve's size
// still fits.
func TestBudgetProgramsFit(t *testing.T) {
	for _, tc := range []struct {
		threads, regs int
		want          int
		limit         string
	}{
		// 32 threads at 32 registers: 30 blocks per SM less 2 reserved.
		{32, 32, 30, "blocks per SM"},
		// 256 threads: 1,024 threads per SM less the reserve's 1,024.
		{256, 32, 4, "threads per SM"},
		// 256 threads at 64 registers: 16 K a block, 32 K left.
		{256, 64, 2, "registers per SM"},
		// 1,024 threads: one fits the 1,024 threads left.
		{1024, 32, 1, "threads per SM"},
	} {
		t.Run(fmt.Sprintf("threads=%d,regs=%d", tc.threads, tc.regs), func(t *testing.T) {
			b := NewBudget(h200, DefaultReserve)
			s := Shape{Blocks: 132, Threads: tc.threads, Registers: tc.regs, SharedMem: 8 * tc.threads}
			n := 0
			for ; ; n++ {
				if _, err := b.Claim("grid", s); err != nil {
					var be *BudgetError
					if !errors.As(err, &be) || !errors.Is(err, ErrBudget) || be.Limit != tc.limit {
						t.Fatalf("refusal %v: want the limit %q", err, tc.limit)
					}
					break
				}
				if n > 200 {
					t.Fatal("no refusal")
				}
			}
			if n != tc.want {
				t.Fatalf("%d grids fit, want %d", n, tc.want)
			}
			if err := b.CheckOneShot("oneshot", Shape{Blocks: 1000, Threads: 1024, Registers: 32}); err != nil {
				t.Fatalf("a one-shot block of the reserve's size: %v", err)
			}
			if err := b.CheckOneShot("oneshot", Shape{Blocks: 1, Threads: 256, Registers: 32, SharedMem: 100 << 10}); err != nil {
				t.Fatalf("a one-shot block of 100 KiB of shared memory: %v", err)
			}
			st := b.Stats()
			if st.Grids != tc.want || st.Refused != 1 || st.Blocks != 132*tc.want {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestBudgetFitShrinks: Fit grants what is left, the last grid fewer
// blocks, then nothing; a release gives the blocks back.
func TestBudgetFitShrinks(t *testing.T) {
	lim := BudgetLimits{SMs: 4, BlocksPerSM: 4, ThreadsPerSM: 1024, RegistersPerSM: 64 << 10, SharedMemPerSM: 64 << 10}
	b := NewBudget(lim, Reserve{Blocks: 1})
	s := Shape{Blocks: 8, Threads: 32, Registers: 32}
	var claims []*Claim
	for _, want := range []int{8, 4} {
		n, err := b.Fit("g", s)
		if err != nil || n != want {
			t.Fatalf("Fit = %d, %v: want %d", n, err, want)
		}
		c, err := b.Claim("g", Shape{Blocks: n, Threads: 32, Registers: 32})
		if err != nil {
			t.Fatal(err)
		}
		claims = append(claims, c)
	}
	if n, err := b.Fit("g", s); n != 0 || !errors.Is(err, ErrBudget) {
		t.Fatalf("Fit on a full budget = %d, %v", n, err)
	}
	claims[0].Release()
	claims[0].Release() // a second release does nothing
	if n, err := b.Fit("g", s); err != nil || n != 8 {
		t.Fatalf("Fit after a release = %d, %v", n, err)
	}
	if st := b.Stats(); st.Grids != 1 || st.Blocks != 4 {
		t.Fatalf("stats %+v", st)
	}
}

// TestBudgetResidentGrids: persistent grids stop at the resident grids
// less the reserve's.
func TestBudgetResidentGrids(t *testing.T) {
	b := NewBudget(h200, DefaultReserve)
	for i := range 120 {
		if _, err := b.Claim("ring", Shape{Blocks: 1, Threads: 1, Registers: 16}); err != nil {
			t.Fatalf("ring %d: %v", i, err)
		}
	}
	_, err := b.Claim("ring", Shape{Blocks: 1, Threads: 1, Registers: 16})
	var be *BudgetError
	if !errors.As(err, &be) || be.Limit != "resident grids" || be.Grids != 120 {
		t.Fatalf("121st = %v", err)
	}
}

// TestBudgetOneShotRefused: a one-shot block larger than what the
// persistent grids left on every SM is refused; none is refused on an
// empty budget.
func TestBudgetOneShotRefused(t *testing.T) {
	b := NewBudget(h200, Reserve{})
	big := Shape{Blocks: 1, Threads: 1024, Registers: 32}
	if err := b.CheckOneShot("oneshot", big); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Claim("grid", Shape{Blocks: 132, Threads: 1024, Registers: 32}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Claim("grid", Shape{Blocks: 132, Threads: 512, Registers: 32}); err != nil {
		t.Fatal(err)
	}
	err := b.CheckOneShot("oneshot", big)
	var be *BudgetError
	if !errors.As(err, &be) || be.Limit != "threads per SM" || be.Need != 1024 || be.Free != 512 {
		t.Fatalf("one-shot beside full SMs = %v", err)
	}
	if err := b.CheckOneShot("oneshot", Shape{Blocks: 1, Threads: 512, Registers: 32}); err != nil {
		t.Fatalf("a block that fits: %v", err)
	}
}

// TestBudgetUnknownRegisters: a shape without a register count is
// counted at the most its block size may use.
func TestBudgetUnknownRegisters(t *testing.T) {
	b := NewBudget(h200, Reserve{})
	// 256 threads: at most 255 registers a thread, 65,536 a block.
	if _, err := b.Claim("grid", Shape{Blocks: 132, Threads: 256}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Claim("grid", Shape{Blocks: 1, Threads: 32, Registers: 8}); !errors.Is(err, ErrBudget) {
		t.Fatalf("beside a grid of unknown registers: %v", err)
	}
}

// TestBudgetConcurrent: claims and releases from many goroutines keep
// the books (run under -race).
func TestBudgetConcurrent(t *testing.T) {
	b := NewBudget(h200, DefaultReserve)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				c, err := b.Claim("g", Shape{Blocks: 33, Threads: 64, Registers: 32})
				if err == nil {
					c.Release()
				}
			}
		}()
	}
	wg.Wait()
	if st := b.Stats(); st.Grids != 0 || st.Blocks != 0 || st.MaxThreadsPerSM != 0 || st.MaxRegistersPerSM != 0 {
		t.Fatalf("after every release: %+v", st)
	}
}
