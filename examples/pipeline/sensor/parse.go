package sensor

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/ringactor/ringactor/actors"
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
	started bool // a non-blank line has been seen: no header from now on
	stats   Stats
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
	}
	p.stats.Rows++
	c1 := bytes.IndexByte(ln, ',')
	if c1 < 0 {
		p.reject(b, n, fieldsReason(ln))
		return
	}
	name, rest := ln[:c1], ln[c1+1:]
	c2 := bytes.IndexByte(rest, ',')
	if c2 < 0 || bytes.IndexByte(rest[c2+1:], ',') >= 0 {
		p.reject(b, n, fieldsReason(ln))
		return
	}
	tsField, vField := rest[:c2], rest[c2+1:]
	ts, ok := parseInt(tsField)
	if !ok {
		p.reject(b, n, fmt.Sprintf("timestamp %q is not an integer", tsField))
		return
	}
	if _, ok := windowStart(ts, p.window); !ok {
		p.reject(b, n, fmt.Sprintf("timestamp %d: window start out of range", ts))
		return
	}
	// string(vField) does not escape: no allocation for short fields.
	v, err := strconv.ParseFloat(string(vField), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		p.reject(b, n, fmt.Sprintf("value %q is not a finite number", vField))
		return
	}
	id, ok := p.ids[string(name)]
	if !ok {
		s := string(name)
		id = uint32(len(p.ids))
		p.ids[s] = id
		b.NewNames = append(b.NewNames, s)
		p.stats.Sensors++
	}
	b.Rows = append(b.Rows, Row{TS: ts, V: v, Line: n, Sensor: id})
}

// reject records line n as rejected for reason.
func (p *parser) reject(b *Batch, n int64, reason string) {
	p.stats.Rejected++
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
