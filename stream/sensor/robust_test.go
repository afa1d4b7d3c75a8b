package sensor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
)

// endless is an input that never ends: rows of one sensor with a timestamp
// that grows by 1 ms a row. It counts the bytes it has handed out.
type endless struct {
	ts   int64
	read atomic.Int64
	line []byte
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for {
		e.line = strconv.AppendInt(append(e.line[:0], "s,"...), e.ts, 10)
		e.line = append(e.line, ",1.5\n"...)
		if n+len(e.line) > len(p) {
			break
		}
		n += copy(p[n:], e.line)
		e.ts++
	}
	e.read.Add(int64(n))
	return n, nil
}

// stuckWriter blocks every Write until released, then fails it.
type stuckWriter struct {
	once    sync.Once
	release chan struct{}
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	<-w.release
	return 0, errors.New("stuck writer released")
}

func (w *stuckWriter) unblock() { w.once.Do(func() { close(w.release) }) }

// TestBackpressure runs an endless input into a sink whose output never
// drains: the reader must stop once every queue is full, having read no more
// than the queues hold, and cancelling the run must end it.
func TestBackpressure(t *testing.T) {
	in := &endless{}
	out := &stuckWriter{release: make(chan struct{})}
	defer out.unblock()
	cfg := Config{WindowMS: 10, Scale: 1, Streaming: true, ChunkBytes: 4096, RingCapacity: 2}
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, cfg, in, out, io.Discard, quiet()...)
		done <- err
	}()
	// Wait until the reader has stopped: nothing read for a while.
	last, still := int64(-1), 0
	for still < 20 {
		time.Sleep(10 * time.Millisecond)
		if n := in.read.Load(); n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
	// Four stages of a ring and an overflow of 2 each, one message in each
	// handler, the reader's, the sink's output: some 30 chunks.
	const bound = 40 * 4096
	if last > bound || last == 0 {
		t.Fatalf("the reader read %d bytes before it stopped, want 1 to %d", last, bound)
	}
	t.Logf("the reader stopped after %d bytes (%d rows)", last, in.ts)
	cancel()
	out.unblock()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// failingReader returns some lines, then an error.
type failingReader struct {
	data string
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestFailures checks that a failing input or output, and a cancelled
// context, end the run with an error that says so.
func TestFailures(t *testing.T) {
	fire := errors.New("disk on fire")
	var out, rej strings.Builder
	_, err := Run(testCtx(t), DefaultConfig(), &failingReader{data: "a,1,1\nb,2,2\n", err: fire}, &out, &rej, quiet()...)
	if !errors.Is(err, fire) || !strings.Contains(err.Error(), "read input") {
		t.Errorf("read failure: %v", err)
	}

	for _, streaming := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Streaming = streaming
		_, err = Run(testCtx(t), cfg, strings.NewReader("a,1,1\na,5000,2\n"), errWriter{}, io.Discard, quiet()...)
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("streaming %v: write failure: %v", streaming, err)
		}
	}

	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	if _, err := Run(ctx, DefaultConfig(), strings.NewReader("a,1,1\n"), io.Discard, io.Discard, quiet()...); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// TestValidate checks the parameter checks.
func TestValidate(t *testing.T) {
	good := DefaultConfig()
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*Config){
		"window 0":    func(c *Config) { c.WindowMS = 0 },
		"scale NaN":   func(c *Config) { c.Scale = math.NaN() },
		"offset Inf":  func(c *Config) { c.Offset = math.Inf(-1) },
		"lateness -1": func(c *Config) { c.Streaming, c.LatenessMS = true, -1 },
		"chunk -1":    func(c *Config) { c.ChunkBytes = -1 },
		"ring 1":      func(c *Config) { c.RingCapacity = 1 },
		"ring 6":      func(c *Config) { c.RingCapacity = 6 },
		"ring -2":     func(c *Config) { c.RingCapacity = -2 },
	} {
		c := good
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := Run(testCtx(t), c, strings.NewReader(""), io.Discard, io.Discard, quiet()...); err == nil {
			t.Errorf("%s: Run accepted it", name)
		}
	}
}

// TestExtremes checks timestamps at the ends of int64, windows and
// lateness as wide as int64 allows, and values whose scaled sums overflow,
// against the reference.
func TestExtremes(t *testing.T) {
	input := strings.Join([]string{
		"a,-9223372036854775808,1", // window start below int64 unless W divides it
		"a,-9223372036854775000,2",
		"b,-1,3",
		"b,0,1e308",
		"b,1,1e308",
		"c,2,-1e308",
		"c,3,1e308",
		"a,9223372036854775807,4",
		"a,9223372036854775806,5",
		"b,-5,6",
		"a,-9223372036854775807,7",
	}, "\n")
	for _, cfg := range []Config{
		{WindowMS: 1000, Scale: 10},
		{WindowMS: 1000, Scale: 10, Streaming: true},
		{WindowMS: 1000, Scale: 1, Streaming: true, LatenessMS: math.MaxInt64},
		{WindowMS: math.MaxInt64, Scale: 1},
		{WindowMS: math.MaxInt64, Scale: 1, Streaming: true, LatenessMS: 5},
		{WindowMS: 1, Scale: -1, Offset: 0.5, Streaming: true, LatenessMS: math.MaxInt64 - 1},
		{WindowMS: 8, Scale: 1, Streaming: true},
	} {
		t.Run(fmt.Sprintf("W=%d,scale=%g,streaming=%v,L=%d", cfg.WindowMS, cfg.Scale, cfg.Streaming, cfg.LatenessMS), func(t *testing.T) {
			out, rej, st := runString(t, cfg, strings.NewReader(input))
			compare(t, out, rej, st, reference(input, cfg))
		})
	}
}

// TestParseInt compares parseInt with strconv.ParseInt on edge cases.
func TestParseInt(t *testing.T) {
	for _, s := range []string{"", "+", "-", "0", "-0", "+0", "007", "12", "-12", "+12", "1 ", " 1", "1.0", "1e3",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"99999999999999999999", "0x10", "1_000", "١٢", "+-1", "--1"} {
		checkParseInt(t, s)
	}
}

// FuzzParseInt compares parseInt with strconv.ParseInt.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-9223372036854775808", "9223372036854775807", "+1", "1a"} {
		f.Add(s)
	}
	f.Fuzz(checkParseInt)
}

func checkParseInt(t *testing.T, s string) {
	want, err := strconv.ParseInt(s, 10, 64)
	got, ok := parseInt([]byte(s))
	if ok != (err == nil) || got != want && ok {
		t.Errorf("parseInt(%q) = %d, %v; strconv: %d, %v", s, got, ok, want, err)
	}
}

// FuzzWindowStart compares windowStart with floor division in math/big.
func FuzzWindowStart(f *testing.F) {
	for _, c := range [][2]int64{{0, 1}, {-1, 10}, {-10, 10}, {math.MinInt64, 1000}, {math.MinInt64, 8},
		{math.MaxInt64, math.MaxInt64}, {math.MinInt64, math.MaxInt64}, {-1, math.MaxInt64}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, ts, w int64) {
		if w < 1 {
			return
		}
		q := new(big.Int).Div(big.NewInt(ts), big.NewInt(w)) // Euclidean: the floor for w > 0
		want := q.Mul(q, big.NewInt(w))
		got, ok := windowStart(ts, w)
		if ok != want.IsInt64() || ok && got != want.Int64() {
			t.Errorf("windowStart(%d, %d) = %d, %v; want %s", ts, w, got, ok, want)
		}
	})
}

// FuzzPipeline runs arbitrary input through the pipeline and the
// reference, with and without lateness; go test runs the seeds.
func FuzzPipeline(f *testing.F) {
	for _, s := range []string{"", "\n", "sensor,ts_ms,value", "a,1,1\r\nb,-3,2\n\na,0,x\n", "\uFEFFa,5,5\na,1,1\na,20,0\na,2,2",
		"a,,\n,1,1\n", "a,1,1\r\r\n", "x,-1,1e-320\nx,-2,-0",
		"\"sensor\",ts_ms,\"value\"\n\"a,b\",1,\"2\"\n\"x\"\"y\",2,3\r\na\"b,1,1\n\"open,1,1\n \\.,1,1\n"} {
		f.Add(s, int64(10), int64(-1))
		f.Add(s, int64(3), int64(0))
	}
	f.Fuzz(func(t *testing.T, input string, w, lateness int64) {
		if w < 1 {
			return
		}
		cfg := Config{WindowMS: w, Scale: 1, Streaming: lateness >= 0, LatenessMS: max(lateness, 0), ChunkBytes: 16, RingCapacity: 2}
		out, rej, st := runString(t, cfg, strings.NewReader(input))
		compare(t, out, rej, st, reference(input, cfg))
	})
}

// TestRunInShared runs pipelines concurrently in one runtime: each gets
// kernels of its own and the result of a run alone.
func TestRunInShared(t *testing.T) {
	rt, err := actors.NewRuntime(quiet()...)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(testCtx(t))
	input := messy{lines: 2000, seed: 9, disorder: 100}.generate()
	var wg sync.WaitGroup
	for name, cfg := range configs() {
		want := reference(input, cfg)
		wg.Go(func() {
			var out, rej strings.Builder
			st, err := RunIn(testCtx(t), rt, cfg, strings.NewReader(input), &out, &rej)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			if out.String() != want.out || rej.String() != want.rejects || st != want.stats {
				t.Errorf("%s: differs from the reference", name)
			}
		})
	}
	wg.Wait()
}
