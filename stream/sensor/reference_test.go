package sensor

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// refWindow is the reference's aggregate of one (sensor, window).
type refWindow struct {
	sensor        string
	start         int64
	count         int64
	min, max, sum float64
	scaled        float64 // sum of v/2^64, for the mean when sum overflows
}

// mean is the specification's mean: the sum over the count; when the sum
// has overflowed while every value is finite, the sum of v·2^-64 over the
// count, times 2^64, clamped to [min, max].
func (w *refWindow) mean() float64 {
	if !math.IsInf(w.sum, 0) && !math.IsNaN(w.sum) {
		return w.sum / float64(w.count)
	}
	if math.IsInf(w.min, 0) || math.IsInf(w.max, 0) {
		return w.scaled / float64(w.count) * math.Ldexp(1, 64)
	}
	return math.Min(math.Max(w.scaled/float64(w.count)*math.Ldexp(1, 64), w.min), w.max)
}

// refResult is what the reference computes: the output CSV, the rejects
// stream, and the windows as float64s.
type refResult struct {
	out     string
	rejects string
	windows []refWindow
	stats   Stats
}

// reference computes the package's specification the plain way: split the
// whole input into lines and fields with the strings package, parse with
// strconv, do the window arithmetic in math/big, and (in streaming mode)
// emit the closed windows after every row. It shares nothing with the
// pipeline's code but the message wording.
func reference(input string, cfg Config) refResult {
	var res refResult
	var rej strings.Builder
	lines := strings.Split(input, "\n")
	if strings.HasSuffix(input, "\n") || input == "" {
		lines = lines[:len(lines)-1]
	}
	bigW := big.NewInt(cfg.WindowMS)
	open := map[[2]string]*refWindow{} // key: sensor, start as decimal
	var emitted []refWindow
	names := map[string]bool{}
	var maxTS *big.Int
	reject := func(n int, format string, args ...any) {
		res.stats.Rejected++
		fmt.Fprintf(&rej, "line %d: %s\n", n, fmt.Sprintf(format, args...))
	}
	flush := func(all bool) {
		var out []refWindow
		for k, w := range open {
			if all {
				out = append(out, *w)
				delete(open, k)
				continue
			}
			end := new(big.Int).Add(big.NewInt(w.start), bigW)
			end.Add(end, big.NewInt(cfg.LatenessMS))
			if end.Cmp(maxTS) <= 0 {
				out = append(out, *w)
				delete(open, k)
			}
		}
		slices.SortFunc(out, func(a, b refWindow) int {
			if cfg.Streaming {
				return cmp.Or(cmp.Compare(a.start, b.start), strings.Compare(a.sensor, b.sensor))
			}
			return cmp.Or(strings.Compare(a.sensor, b.sensor), cmp.Compare(a.start, b.start))
		})
		emitted = append(emitted, out...)
	}
	started := false
	for i, ln := range lines {
		n := i + 1
		res.stats.Lines++
		if n == 1 {
			ln = strings.TrimPrefix(ln, "\uFEFF")
		}
		ln = strings.TrimSuffix(ln, "\r")
		if strings.Trim(ln, " \t") == "" {
			continue
		}
		f, bad := refFields(ln)
		if !started {
			started = true
			if bad == "" && slices.Equal(f, []string{"sensor", "ts_ms", "value"}) {
				continue
			}
		}
		res.stats.Rows++
		if bad != "" {
			reject(n, "%s", bad)
			continue
		}
		if len(f) != 3 {
			reject(n, "want 3 fields (sensor,ts_ms,value), got %d", len(f))
			continue
		}
		ts, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			reject(n, "timestamp %s is not an integer", refQuote(f[1]))
			continue
		}
		q := new(big.Int).Div(big.NewInt(ts), bigW) // Euclidean: the floor, as W > 0
		bigStart := q.Mul(q, bigW)
		if !bigStart.IsInt64() {
			reject(n, "timestamp %d: window start out of range", ts)
			continue
		}
		start := bigStart.Int64()
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			reject(n, "value %s is not a finite number", refQuote(f[2]))
			continue
		}
		if !names[f[0]] {
			names[f[0]] = true
			res.stats.Sensors++
		}
		if sv := float64(v*cfg.Scale) + cfg.Offset; math.IsInf(sv, 0) {
			// The scale stage rejects it: before the window stage sees it,
			// so it is never late and moves no watermark.
			reject(n, "value %s × scale %s + offset %s overflows float64 (%s)", refG(v), refG(cfg.Scale), refG(cfg.Offset), refG(sv))
			continue
		}
		if cfg.Streaming && maxTS != nil {
			end := new(big.Int).Add(bigStart, bigW)
			if new(big.Int).Add(end, big.NewInt(cfg.LatenessMS)).Cmp(maxTS) <= 0 {
				res.stats.Late++
				reject(n, "late event for window %d of sensor %s: newest timestamp %s ≥ window end %s + lateness %d",
					start, refQuote(f[0]), maxTS, end, cfg.LatenessMS)
				continue
			}
		}
		v = float64(v*cfg.Scale) + cfg.Offset
		key := [2]string{f[0], strconv.FormatInt(start, 10)}
		w := open[key]
		if w == nil {
			w = &refWindow{sensor: f[0], start: start, min: v, max: v}
			open[key] = w
		}
		w.count++
		w.sum += v
		w.scaled += math.Ldexp(v, -64)
		w.min = min(w.min, v)
		w.max = max(w.max, v)
		if maxTS == nil || big.NewInt(ts).Cmp(maxTS) > 0 {
			maxTS = big.NewInt(ts)
			if cfg.Streaming {
				flush(false)
			}
		}
	}
	flush(true)
	rej.WriteString(rejectedLine(res.stats.Rejected))
	var out strings.Builder
	cw := csv.NewWriter(&out)
	_ = cw.Write([]string{"sensor", "window_start_ms", "count", "min", "max", "mean"})
	for _, w := range emitted {
		_ = cw.Write([]string{w.sensor, strconv.FormatInt(w.start, 10), strconv.FormatInt(w.count, 10),
			strconv.FormatFloat(w.min, 'g', -1, 64), strconv.FormatFloat(w.max, 'g', -1, 64),
			strconv.FormatFloat(w.mean(), 'g', -1, 64)})
	}
	cw.Flush()
	res.out, res.rejects, res.windows = out.String(), rej.String(), emitted
	res.stats.Windows = int64(len(emitted))
	return res
}

// refFields splits a line into its fields: on every comma when it holds no
// quote; otherwise by RFC 4180, one character at a time, or the reason it
// breaks the rules.
func refFields(ln string) ([]string, string) {
	if !strings.Contains(ln, `"`) {
		return strings.Split(ln, ","), ""
	}
	var fields []string
	var f strings.Builder
	const (
		fieldStart = iota
		unquoted
		inQuotes
		quoteInQuotes // a '"' inside quotes: closes the field or doubles
	)
	state := fieldStart
	for _, c := range []byte(ln) {
		switch state {
		case fieldStart, unquoted:
			switch {
			case c == ',':
				fields = append(fields, f.String())
				f.Reset()
				state = fieldStart
			case c == '"' && state == fieldStart:
				state = inQuotes
			case c == '"':
				return nil, `bare " in an unquoted field (quote the whole field and double its quotes)`
			default:
				f.WriteByte(c)
				state = unquoted
			}
		case inQuotes:
			if c == '"' {
				state = quoteInQuotes
			} else {
				f.WriteByte(c)
			}
		case quoteInQuotes:
			switch c {
			case '"':
				f.WriteByte('"')
				state = inQuotes
			case ',':
				fields = append(fields, f.String())
				f.Reset()
				state = fieldStart
			default:
				return nil, `extraneous " after a quoted field`
			}
		}
	}
	if state == inQuotes {
		return nil, "quoted field not closed on its line (a field cannot span lines)"
	}
	return append(fields, f.String()), ""
}

// refQuote is %q of s, of its first 80 bytes and "…" when it is longer
// (cut back to the first byte of a UTF-8 sequence).
func refQuote(s string) string {
	if len(s) <= 80 {
		return fmt.Sprintf("%q", s)
	}
	n := 80
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return fmt.Sprintf("%q…", s[:n])
}

// refG formats x as strconv does with 'g' and the shortest precision.
func refG(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
