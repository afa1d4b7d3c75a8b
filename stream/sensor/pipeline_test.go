package sensor

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// runString runs the pipeline on input and returns its output, its rejects
// stream and its counters; it fails the test on an error.
func runString(t testing.TB, cfg Config, in io.Reader) (string, string, Stats) {
	t.Helper()
	var out, rej strings.Builder
	st, err := Run(testCtx(t), cfg, in, &out, &rej, quiet()...)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out.String(), rej.String(), st
}

// messy describes a generated test input.
type messy struct {
	lines      int
	seed       uint64
	header     bool // start with the header line
	bom        bool // start with a UTF-8 byte order mark
	crlf       int  // 0: LF; 1: CRLF; 2: a mix
	noFinalEOL bool // the last line has no "\n"
	disorder   int64
}

// testSensors are the sensor names of messy inputs: non-ASCII ones, and the
// empty name.
var testSensors = []string{"a", "b", "capteur-é", "センサー", "z-ü-🙂", "", "A", "a b"}

// badLines are malformed rows of messy inputs.
var badLines = []string{
	"a,1", "a,1,2,3", "a", ",,,", "a,1.0,2", "a, 1,2", "a,1 ,2", "a,,1", "a,0x10,1", "a,1e3,1",
	"a,9223372036854775808,1", "a,-9223372036854775809,1", "a,+-1,1", "a,-,1",
	"a,1,NaN", "a,1,+Inf", "a,1,-inf", "a,1,1e400", "a,1,abc", "a,1, 2", "a,1,", "a,1,1_0",
	"sensor,ts_ms,value", // a header after the first line is a row with a bad timestamp
}

// goodValues are value fields that parse, in various spellings.
var goodValues = []string{"0", "-0", "+4.5", ".5", "5.", "1e-3", "0x1p-2", "123456789.123456789", "-2.5E+2", "7"}

// generate writes the input m describes: good rows of out-of-order,
// negative and positive timestamps around window boundaries, blank lines and
// malformed rows.
func (m messy) generate() string {
	rng := rand.New(rand.NewPCG(m.seed, 42))
	var b strings.Builder
	eol := func() {
		switch {
		case m.crlf == 1, m.crlf == 2 && rng.IntN(2) == 0:
			b.WriteString("\r\n")
		default:
			b.WriteString("\n")
		}
	}
	if m.bom {
		b.WriteString("\uFEFF")
	}
	if m.header {
		b.WriteString(Header)
		eol()
	}
	clock := int64(-1000)
	for i := range m.lines {
		switch r := rng.IntN(100); {
		case r < 4:
			b.WriteString([]string{"", " ", "\t ", ""}[rng.IntN(4)])
		case r < 12:
			b.WriteString(badLines[rng.IntN(len(badLines))])
		default:
			clock += rng.Int64N(12)
			ts := clock
			if m.disorder > 0 && rng.IntN(4) == 0 {
				ts -= rng.Int64N(m.disorder + 1)
			}
			var v string
			if rng.IntN(3) == 0 {
				v = goodValues[rng.IntN(len(goodValues))]
			} else {
				v = strconv.FormatFloat(rng.NormFloat64()*100, 'f', rng.IntN(6), 64)
			}
			ts0 := strconv.FormatInt(ts, 10)
			if ts >= 0 && rng.IntN(20) == 0 {
				ts0 = "+" + ts0
			}
			fmt.Fprintf(&b, "%s,%s,%s", testSensors[rng.IntN(len(testSensors))], ts0, v)
		}
		if i < m.lines-1 || !m.noFinalEOL {
			eol()
		}
	}
	return b.String()
}

// configs are the pipeline configurations every input is checked under.
func configs() map[string]Config {
	hold := Config{WindowMS: 100, Scale: 2.5, Offset: -1.25}
	l0, l50, l1000 := hold, hold, hold
	l0.Streaming = true
	l50.Streaming, l50.LatenessMS = true, 50
	l1000.Streaming, l1000.LatenessMS = true, 1000
	w7 := Config{WindowMS: 7, Scale: 1, Streaming: true, LatenessMS: 3}
	return map[string]Config{"hold": hold, "lateness=0": l0, "lateness=50": l50, "lateness=1000": l1000, "W=7,lateness=3": w7}
}

// TestMatchesReference runs generated inputs with bad rows, negative and
// out-of-order timestamps, non-ASCII sensor names, with and without header,
// byte order mark, CRLF and a final newline, through the pipeline under each
// configuration, cut into chunks of several sizes, and compares the output,
// the rejects stream and the counters with the reference.
func TestMatchesReference(t *testing.T) {
	inputs := map[string]messy{
		"plain":           {lines: 3000, seed: 1},
		"header,disorder": {lines: 3000, seed: 2, header: true, disorder: 300},
		"bom,crlf,header": {lines: 2000, seed: 3, bom: true, header: true, crlf: 1, disorder: 40},
		"mixed eol,noEOL": {lines: 2000, seed: 4, crlf: 2, noFinalEOL: true, disorder: 2000},
		"tiny":            {lines: 3, seed: 5, noFinalEOL: true},
		"empty":           {lines: 0, seed: 6},
	}
	cuts := []struct {
		name  string
		chunk int
		ring  int
	}{{"default", 0, 0}, {"chunk=64,ring=2", 64, 2}, {"chunk=5,ring=2", 5, 2}}
	for iname, m := range inputs {
		input := m.generate()
		for cname, cfg := range configs() {
			want := reference(input, cfg)
			for _, cut := range cuts {
				t.Run(iname+"/"+cname+"/"+cut.name, func(t *testing.T) {
					cfg := cfg
					cfg.ChunkBytes, cfg.RingCapacity = cut.chunk, cut.ring
					out, rej, st := runString(t, cfg, strings.NewReader(input))
					compare(t, out, rej, st, want)
				})
			}
		}
	}
}

// compare fails t when the pipeline's results differ from the reference's.
func compare(t *testing.T, out, rej string, st Stats, want refResult) {
	t.Helper()
	if out != want.out {
		t.Errorf("output differs from the reference:\n%s", firstDiff(out, want.out))
	}
	if rej != want.rejects {
		t.Errorf("rejects differ from the reference:\n%s", firstDiff(rej, want.rejects))
	}
	if st != want.stats {
		t.Errorf("stats = %+v, reference %+v", st, want.stats)
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n  got  %q\n  want %q\n(%d lines, want %d)", i+1, gl, wl, len(g), len(w))
		}
	}
	return "(equal)"
}

// TestReaders feeds the same input through readers that return a byte, half
// a buffer, or data with io.EOF at a time.
func TestReaders(t *testing.T) {
	input := messy{lines: 1500, seed: 7, header: true, disorder: 100, crlf: 2}.generate()
	cfg := configs()["lateness=50"]
	want := reference(input, cfg)
	for name, r := range map[string]func() io.Reader{
		"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(input)) },
		"half":     func() io.Reader { return iotest.HalfReader(strings.NewReader(input)) },
		"data+EOF": func() io.Reader { return iotest.DataErrReader(strings.NewReader(input)) },
	} {
		t.Run(name, func(t *testing.T) {
			out, rej, st := runString(t, cfg, r())
			compare(t, out, rej, st, want)
		})
	}
}

// TestSynthetic checks the generator's input, the one the example and the
// benchmark use, against the reference with and without lateness.
func TestSynthetic(t *testing.T) {
	g := DefaultSynthetic()
	g.Rows, g.BadEvery = 30_000, 500
	if testing.Short() {
		g.Rows = 5000
	}
	var b strings.Builder
	if err := Generate(&b, g); err != nil {
		t.Fatal(err)
	}
	input := b.String()
	for _, cfg := range []Config{DefaultConfig(), {WindowMS: 250, Scale: 0.1, Offset: 273.15, Streaming: true, LatenessMS: 100}} {
		t.Run(fmt.Sprintf("streaming=%v", cfg.Streaming), func(t *testing.T) {
			want := reference(input, cfg)
			if want.stats.Rejected == 0 || want.stats.Windows < 50 {
				t.Fatalf("a weak test input: %+v", want.stats)
			}
			out, rej, st := runString(t, cfg, strings.NewReader(input))
			compare(t, out, rej, st, want)
		})
	}
	var again strings.Builder
	if err := Generate(&again, g); err != nil || again.String() != input {
		t.Fatalf("Generate is not deterministic (err %v)", err)
	}
}

// TestExact pins the output and the rejects stream of a small input whose
// every line is a case: header, CRLF, blank lines, negative timestamps on
// window boundaries, non-ASCII names, each kind of bad row.
func TestExact(t *testing.T) {
	input := "\uFEFFsensor,ts_ms,value\r\n" + // 1: header (after the BOM, before the CR)
		"capteur-é,-1,1.5\r\n" + // 2: window -10; v' = 4
		"\r\n" + // 3: blank
		"センサー,0,2\n" + // 4: window 0; v' = 5; L=0: watermark 0 closes window -10 (end 0)
		"capteur-é,-10,-0.5\n" + // 5: window -10; v' = 0; L=0: late
		"   \t\n" + // 6: blank
		"capteur-é,-11,4\n" + // 7: window -20; v' = 9; L=0: late
		"x,1\n" + // 8: 2 fields
		"x,1,2,3\n" + // 9: 4 fields
		"x,1.5,2\n" + // 10: timestamp not an integer
		"x,1,NaN\n" + // 11: not finite
		"x,1,1e999\n" + // 12: overflows
		"センサー,9,3\n" + // 13: window 0; v' = 7
		"sensor,ts_ms,value\n" + // 14: not the first line: a bad timestamp
		"capteur-é,25,10\n" + // 15: window 20; v' = 21; closes window 0 (L=0), -20 and -10 (L=20)
		"capteur-é,-5,7\n" + // 16: window -10; v' = 15; late with L=0 and L=20
		"センサー,5,1" // 17: window 0; v' = 3; late with L=0, kept with L=20
	const header = "sensor,window_start_ms,count,min,max,mean\n"
	const bad = "line 8: want 3 fields (sensor,ts_ms,value), got 2\n" +
		"line 9: want 3 fields (sensor,ts_ms,value), got 4\n" +
		"line 10: timestamp \"1.5\" is not an integer\n" +
		"line 11: value \"NaN\" is not a finite number\n" +
		"line 12: value \"1e999\" is not a finite number\n"
	hold := Config{WindowMS: 10, Scale: 2, Offset: 1}
	l0 := Config{WindowMS: 10, Scale: 2, Offset: 1, Streaming: true}
	l20 := Config{WindowMS: 10, Scale: 2, Offset: 1, Streaming: true, LatenessMS: 20}
	for _, tc := range []struct {
		name     string
		cfg      Config
		out, rej string
	}{
		{"hold", hold,
			header +
				"capteur-é,-20,1,9,9,9\n" +
				"capteur-é,-10,3,0,15,6.333333333333333\n" +
				"capteur-é,20,1,21,21,21\n" +
				"センサー,0,3,3,7,5\n",
			bad +
				"line 14: timestamp \"ts_ms\" is not an integer\n" +
				"rejected 6 rows\n"},
		{"lateness=0", l0,
			header +
				"capteur-é,-10,1,4,4,4\n" +
				"センサー,0,2,5,7,6\n" +
				"capteur-é,20,1,21,21,21\n",
			"line 5: late event for window -10 of sensor \"capteur-é\": newest timestamp 0 ≥ window end 0 + lateness 0\n" +
				"line 7: late event for window -20 of sensor \"capteur-é\": newest timestamp 0 ≥ window end -10 + lateness 0\n" +
				bad +
				"line 14: timestamp \"ts_ms\" is not an integer\n" +
				"line 16: late event for window -10 of sensor \"capteur-é\": newest timestamp 25 ≥ window end 0 + lateness 0\n" +
				"line 17: late event for window 0 of sensor \"センサー\": newest timestamp 25 ≥ window end 10 + lateness 0\n" +
				"rejected 10 rows\n"},
		{"lateness=20", l20,
			header +
				"capteur-é,-20,1,9,9,9\n" +
				"capteur-é,-10,2,0,4,2\n" +
				"センサー,0,3,3,7,5\n" +
				"capteur-é,20,1,21,21,21\n",
			bad +
				"line 14: timestamp \"ts_ms\" is not an integer\n" +
				"line 16: late event for window -10 of sensor \"capteur-é\": newest timestamp 25 ≥ window end 0 + lateness 20\n" +
				"rejected 7 rows\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunk := range []int{0, 1, 16} {
				cfg := tc.cfg
				cfg.ChunkBytes = chunk
				out, rej, _ := runString(t, cfg, strings.NewReader(input))
				if out != tc.out {
					t.Errorf("chunk %d: output\n%s\nwant\n%s", chunk, out, tc.out)
				}
				if rej != tc.rej {
					t.Errorf("chunk %d: rejects\n%s\nwant\n%s", chunk, rej, tc.rej)
				}
				if ref := reference(input, cfg); ref.out != tc.out || ref.rejects != tc.rej {
					t.Errorf("the reference disagrees:\n%s\n%s", ref.out, ref.rejects)
				}
			}
		})
	}
}

// TestStreamingOrder checks the order guarantee of streaming mode: the
// whole output is sorted by window start, then sensor, and holds exactly
// the windows of the hold-everything run minus the late events' effect.
func TestStreamingOrder(t *testing.T) {
	input := messy{lines: 5000, seed: 8, disorder: 500}.generate()
	cfg := Config{WindowMS: 100, Scale: 1, Streaming: true, LatenessMS: 200, ChunkBytes: 300}
	out, _, st := runString(t, cfg, strings.NewReader(input))
	type key struct {
		start  int64
		sensor string
	}
	var keys []key
	for _, ln := range strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:] {
		f := strings.Split(ln, ",")
		start, err := strconv.ParseInt(f[len(f)-5], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key{start, strings.Join(f[:len(f)-5], ",")})
	}
	if int64(len(keys)) != st.Windows || len(keys) < 100 {
		t.Fatalf("%d rows, stats say %d windows", len(keys), st.Windows)
	}
	if !slices.IsSortedFunc(keys, func(a, b key) int {
		if a.start != b.start {
			return int(a.start - b.start)
		}
		return strings.Compare(a.sensor, b.sensor)
	}) {
		t.Error("streaming output is not ordered by window start, then sensor")
	}
	if st.Late == 0 {
		t.Error("no late events: the test does not test lateness")
	}
}

// TestFloatRoundTrip checks that every float of the output parses back to
// the float64 the reference computed, bit for bit, for values that print
// with many digits, tiny and huge values, -0 and sums that overflow.
func TestFloatRoundTrip(t *testing.T) {
	vals := []string{"0.1", "0.2", "0.3", "1e-300", "5e-324", "-0", "0", "1.7976931348623157e308",
		"1.7976931348623157e308", "123456789.123456789", "2.2250738585072014e-308", "-1e-10", "3"}
	var b strings.Builder
	for i, v := range vals {
		fmt.Fprintf(&b, "s%d,%d,%s\n", i%3, i, v)
		fmt.Fprintf(&b, "t,%d,%s\n", i, v)
	}
	for _, cfg := range []Config{
		{WindowMS: 1000, Scale: 1},
		{WindowMS: 4, Scale: 1 / 3.0, Offset: 0.1},
		{WindowMS: 2, Scale: -7, Offset: 1e-20, Streaming: true},
	} {
		input := b.String()
		out, _, _ := runString(t, cfg, strings.NewReader(input))
		want := reference(input, cfg)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:]
		if len(lines) != len(want.windows) {
			t.Fatalf("%d windows, want %d", len(lines), len(want.windows))
		}
		for i, ln := range lines {
			f := strings.Split(ln, ",")
			w := want.windows[i]
			for j, wantF := range []float64{w.min, w.max, w.mean()} {
				got, err := strconv.ParseFloat(f[3+j], 64)
				if err != nil && !errors.Is(err, strconv.ErrRange) {
					t.Fatalf("%q: %v", ln, err)
				}
				if math.Float64bits(got) != math.Float64bits(wantF) && !(math.IsNaN(got) && math.IsNaN(wantF)) {
					t.Errorf("%q field %d = %v, want %v (bits differ)", ln, 3+j, got, wantF)
				}
			}
		}
	}
}
