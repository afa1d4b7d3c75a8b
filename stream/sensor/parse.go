package sensor

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/stream"
)

// Header is the optional first line of the input.
const Header = "sensor,ts_ms,value"

// bom is the UTF-8 byte order mark, skipped at the start of the input.
var bom = []byte("\uFEFF")

// parser is the parse stage's state: the sensor intern table, whether the
// header line has been decided on, and its counters.
type parser struct {
	window  int64
	pools   *pools
	ids     map[string]uint32
	names   []string  // by id
	table   *runTable // names and reasons of the readings, when asReadings is set
	started bool      // a non-blank line has been seen: no header from now on
	// asReadings makes each row and reject a Reading emitted to out, in
	// line order, written in place (Emitter.Next), instead of a row or
	// reject of the batch (the stream graph's parse stage).
	asReadings bool
	out        *stream.Emitter[Reading]
	stats      Stats

	// splitQuoted's buffers: the unquoted fields' bytes, where each ends,
	// and the fields.
	scratch []byte
	ends    []int
	fields  [][]byte
}

// newParseHandler is the parse kernel's factory: each (re)start gets an
// empty intern table.
func newParseHandler(cfg Config, p *pools) func() actors.Handler[Chunk, *Batch] {
	return func() actors.Handler[Chunk, *Batch] {
		ps := &parser{window: cfg.WindowMS, pools: p, ids: make(map[string]uint32)}
		return ps.handle
	}
}

// handle parses one chunk of lines into a batch of rows and rejects, and
// recycles the chunk's buffer. The final chunk becomes the final batch.
func (p *parser) handle(_ context.Context, c Chunk) (*Batch, error) {
	b := p.pools.batch()
	if c.Final {
		b.Final = true
	} else {
		p.parse(c.Data, c.Line, b)
		p.pools.putChunk(c.buf)
	}
	b.Stats = p.stats
	return b, nil
}

// parse appends the rows and rejects of data, whose first line is number
// line, to b.
func (p *parser) parse(data []byte, line int64, b *Batch) {
	for len(data) > 0 {
		var ln []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			ln, data = data[:i], data[i+1:]
		} else {
			ln, data = data, nil
		}
		p.line(ln, line, b)
		line++
	}
}

// line handles input line number n (without its "\n").
func (p *parser) line(ln []byte, n int64, b *Batch) {
	p.stats.Lines++
	if n == 1 {
		ln = bytes.TrimPrefix(ln, bom)
	}
	if k := len(ln); k > 0 && ln[k-1] == '\r' {
		ln = ln[:k-1]
	}
	if blank(ln) {
		return
	}
	if !p.started {
		p.started = true
		if string(ln) == Header {
			return
		}
		if bytes.IndexByte(ln, '"') >= 0 {
			if f, reason := p.splitQuoted(ln); reason == "" && len(f) == 3 &&
				string(f[0]) == "sensor" && string(f[1]) == "ts_ms" && string(f[2]) == "value" {
				return
			}
		}
	}
	p.stats.Rows++
	if !p.unquoted(ln, n, b) {
		p.quoted(ln, n, b)
	}
}

// unquoted is the fast path: it handles row n, ln, when it holds no quote,
// and returns false, having done nothing, when it does. A quote is looked
// for only where it could change the outcome: in the name, and before
// rejecting the row.
func (p *parser) unquoted(ln []byte, n int64, b *Batch) bool {
	c1 := bytes.IndexByte(ln, ',')
	if c1 < 0 {
		if bytes.IndexByte(ln, '"') >= 0 {
			return false
		}
		p.reject(b, n, fieldsReason(ln))
		return true
	}
	name, rest := ln[:c1], ln[c1+1:]
	if bytes.IndexByte(name, '"') >= 0 {
		return false
	}
	c2 := bytes.IndexByte(rest, ',')
	if c2 < 0 || bytes.IndexByte(rest[c2+1:], ',') >= 0 {
		if bytes.IndexByte(rest, '"') >= 0 {
			return false
		}
		p.reject(b, n, fieldsReason(ln))
		return true
	}
	tsField, vField := rest[:c2], rest[c2+1:]
	ts, ok := parseInt(tsField)
	if !ok {
		if bytes.IndexByte(rest, '"') >= 0 {
			return false
		}
		p.reject(b, n, fmt.Sprintf("timestamp %s is not an integer", quote(string(tsField))))
		return true
	}
	// string(vField) does not escape: no allocation for short fields.
	v, err := strconv.ParseFloat(string(vField), 64)
	if err != nil && bytes.IndexByte(vField, '"') >= 0 {
		return false
	}
	p.row(b, n, name, tsField, ts, vField, v, err)
	return true
}

// quoted handles row n, ln, which holds a quote, by RFC 4180.
func (p *parser) quoted(ln []byte, n int64, b *Batch) {
	f, reason := p.splitQuoted(ln)
	switch {
	case reason != "":
		p.reject(b, n, reason)
		return
	case len(f) != 3:
		p.reject(b, n, fmt.Sprintf("want 3 fields (sensor,ts_ms,value), got %d", len(f)))
		return
	}
	ts, ok := parseInt(f[1])
	if !ok {
		p.reject(b, n, fmt.Sprintf("timestamp %s is not an integer", quote(string(f[1]))))
		return
	}
	v, err := strconv.ParseFloat(string(f[2]), 64)
	p.row(b, n, f[0], f[1], ts, f[2], v, err)
}

// row appends row n to b, or rejects it: its fields, the timestamp parsed
// from tsField, and what strconv.ParseFloat made of vField.
func (p *parser) row(b *Batch, n int64, name, tsField []byte, ts int64, vField []byte, v float64, err error) {
	if _, ok := windowStart(ts, p.window); !ok {
		p.reject(b, n, fmt.Sprintf("timestamp %d: window start out of range", ts))
		return
	}
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		p.reject(b, n, fmt.Sprintf("value %s is not a finite number", quote(string(vField))))
		return
	}
	id, ok := p.ids[string(name)]
	if !ok {
		s := string(name)
		id = uint32(len(p.ids))
		p.ids[s] = id
		b.NewNames = append(b.NewNames, s)
		p.names = append(p.names, s)
		if p.asReadings {
			p.table.addName(s)
		}
		p.stats.Sensors++
	}
	if p.asReadings {
		*p.out.Next() = Reading{TS: ts, V: v, Line: n, Sensor: id}
		return
	}
	b.Rows = append(b.Rows, Row{TS: ts, V: v, Line: n, Sensor: id})
}

// Reasons of the rows whose quotes break RFC 4180.
const (
	reasonUnclosed  = `quoted field not closed on its line (a field cannot span lines)`
	reasonAfter     = `extraneous " after a quoted field`
	reasonBareQuote = `bare " in an unquoted field (quote the whole field and double its quotes)`
)

// splitQuoted splits ln, a line that holds a '"', into its fields as RFC
// 4180 reads them: a field that starts with '"' is quoted, ends at the next
// lone '"', which must be followed by ',' or the end of the line, and holds
// commas and doubled quotes ("" for "); an unquoted field holds no '"'. On
// a violation it returns the reason. The fields are valid until the next
// call.
func (p *parser) splitQuoted(ln []byte) (fields [][]byte, reason string) {
	p.scratch, p.ends = p.scratch[:0], p.ends[:0]
	i := 0
	for {
		if i < len(ln) && ln[i] == '"' {
			i++
			for {
				j := bytes.IndexByte(ln[i:], '"')
				if j < 0 {
					return nil, reasonUnclosed
				}
				p.scratch = append(p.scratch, ln[i:i+j]...)
				i += j + 1
				if i < len(ln) && ln[i] == '"' {
					p.scratch = append(p.scratch, '"')
					i++
					continue
				}
				break
			}
			if i < len(ln) && ln[i] != ',' {
				return nil, reasonAfter
			}
		} else {
			j := bytes.IndexByte(ln[i:], ',')
			if j < 0 {
				j = len(ln) - i
			}
			f := ln[i : i+j]
			if bytes.IndexByte(f, '"') >= 0 {
				return nil, reasonBareQuote
			}
			p.scratch = append(p.scratch, f...)
			i += j
		}
		p.ends = append(p.ends, len(p.scratch))
		if i == len(ln) {
			break
		}
		i++ // the comma
	}
	fields, start := p.fields[:0], 0
	for _, e := range p.ends {
		fields = append(fields, p.scratch[start:e:e])
		start = e
	}
	p.fields = fields
	return fields, ""
}

// maxQuoted is how many bytes of an offending field a reason quotes.
const maxQuoted = 80

// quote quotes s as strconv.Quote does for a reason: at most its first
// maxQuoted bytes, cut back to the start of a UTF-8 sequence, and "…" after
// the closing quote when s is longer.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

// reject records line n as rejected for reason.
func (p *parser) reject(b *Batch, n int64, reason string) {
	p.stats.Rejected++
	if p.asReadings {
		*p.out.Next() = Reading{TS: math.MinInt64, Line: n, Reject: p.table.putReason(reason)}
		return
	}
	b.Rejects = append(b.Rejects, Reject{Line: n, Reason: reason})
}

// fieldsReason says how many fields ln has.
func fieldsReason(ln []byte) string {
	return fmt.Sprintf("want 3 fields (sensor,ts_ms,value), got %d", bytes.Count(ln, []byte{','})+1)
}

// blank reports whether ln is empty or only spaces and tabs.
func blank(ln []byte) bool {
	for _, c := range ln {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// parseInt reads a base-10 int64 with an optional sign, accepting exactly
// what strconv.ParseInt(s, 10, 64) accepts, without converting to a string.
func parseInt(s []byte) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, false
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var u uint64
	for _, c := range s {
		d := uint64(c) - '0'
		if d > 9 || u > (limit-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	if neg {
		return int64(-u), true
	}
	return int64(u), true
}

// windowStart is floor(ts/w)·w, and false when that does not fit in an
// int64 (ts within w of math.MinInt64).
func windowStart(ts, w int64) (int64, bool) {
	q := ts / w
	if ts%w < 0 {
		q--
	}
	if q < math.MinInt64/w {
		return 0, false
	}
	return q * w, true
}
