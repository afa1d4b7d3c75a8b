package pagerank

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// The fast edge-list scanner. The input is cut into chunks at line ends,
// and each chunk is scanned byte by byte on its own goroutine into tokens,
// two per edge: a node id that is a small decimal number in canonical form
// becomes its value, any other id a reference to its text (a substring of
// the input: no string is allocated for it). One sequential pass then
// numbers the nodes in the order of their first appearance, through a
// table indexed by value for the numeric ids and a map for the others, and
// writes the node indices over the tokens. The graph is built from them
// (build). An input with any malformed line is parsed again by the
// line-by-line parser (parseLines), which reports the lines by number: the
// two agree on every input (scan_test.go).

// Byte classes of the scanner.
const (
	clOther   = iota // part of a node id
	clSpace          // separates fields: ' ', '\t', '\r', '\v', '\f'
	clNewline        // ends a line
	clComment        // '#': a comment to the end of the line
)

// class is the byte class table.
var class = func() (t [256]uint8) {
	for _, c := range []byte{' ', '\t', '\r', '\v', '\f'} {
		t[c] = clSpace
	}
	t['\n'] = clNewline
	t['#'] = clComment
	return t
}()

// chunkBytes is the least input a scanning goroutine is given.
const chunkBytes = 256 << 10

// chunk is the scan of one piece of the input.
type chunk struct {
	toks    []int32  // ≥ 0: a numeric id's value; < 0: −1−i for strs[i]
	strs    []string // the other ids, in order
	largest int32    // the largest numeric id (−1: none)
	bad     bool     // a malformed line: the input is parsed again by parseLines
}

// ParseTimings are how long the phases of reading an edge list took.
type ParseTimings struct {
	Read  time.Duration // reading the input into memory
	Parse time.Duration // scanning it and numbering the nodes
	Build time.Duration // building the graph's in-edge CSR
}

// ParseFileTimed is ParseFile that also reports how long each phase took.
func ParseFileTimed(name string) (*Graph, ParseTimings, error) {
	start := time.Now()
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, ParseTimings{}, fmt.Errorf("pagerank: %w", err)
	}
	read := time.Since(start)
	g, t, err := parseTimed(owned(data))
	t.Read = read
	if pe, ok := errors.AsType[*ParseError](err); ok {
		pe.Name = name
	}
	return g, t, err
}

// parseTimed parses data (see Parse), timing the scan and the build.
func parseTimed(data string) (*Graph, ParseTimings, error) {
	var t ParseTimings
	start := time.Now()
	data = strings.TrimPrefix(data, "\uFEFF")
	maxNum := min(max(len(data)/2, 1<<16), maxNumeric)
	chunks := scanChunks(data, maxNum, max(1, min(runtime.GOMAXPROCS(0), len(data)/chunkBytes)))
	for i := range chunks {
		if chunks[i].bad {
			g, err := parseLines(data)
			t.Parse = time.Since(start)
			return g, t, err
		}
	}
	names, err := number(chunks, maxNum, len(data))
	t.Parse = time.Since(start)
	if err != nil {
		return nil, t, err
	}
	start = time.Now()
	g, err := build(names, endsOf(chunks)...)
	t.Build = time.Since(start)
	return g, t, err
}

// scanChunks scans data in k pieces of about equal size (cut after a
// '\n'), one goroutine each.
func scanChunks(data string, maxNum, k int) []chunk {
	chunks := make([]chunk, k)
	if k == 1 {
		chunks[0] = scan(data, maxNum)
		return chunks
	}
	var wg sync.WaitGroup
	lo := 0
	for i := range k {
		hi := len(data)
		if i < k-1 {
			hi = max(lo, len(data)*(i+1)/k)
			if j := strings.IndexByte(data[hi:], '\n'); j >= 0 {
				hi += j + 1
			} else {
				hi = len(data)
			}
		}
		piece := data[lo:hi]
		lo = hi
		wg.Go(func() { chunks[i] = scan(piece, maxNum) })
	}
	wg.Wait()
	return chunks
}

// scan tokenizes whole lines (the last may lack its '\n').
func scan(d string, maxNum int) chunk {
	c := chunk{toks: make([]int32, 0, len(d)/4+2), largest: -1} // "1 2\n": 4 bytes a token
	n := len(d)
	i := 0
	for i < n {
		// A line: skip leading spaces.
		for i < n && class[d[i]] == clSpace {
			i++
		}
		if i == n {
			break
		}
		switch class[d[i]] {
		case clNewline:
			i++
			continue
		case clComment:
			i = lineEnd(d, i)
			continue
		}
		// Two fields, then only spaces up to the line's end or a comment.
		for f := range 2 {
			if f == 1 {
				for i < n && class[d[i]] == clSpace {
					i++
				}
				if i == n || class[d[i]] != clOther {
					c.bad = true // one field
					return c
				}
			}
			start := i
			v := uint64(0)
			digits := true
			for i < n {
				b := d[i]
				if b-'0' <= 9 {
					v = v*10 + uint64(b-'0')
				} else if class[b] != clOther {
					break
				} else {
					digits = false
				}
				i++
			}
			if l := i - start; digits && l <= 9 && (l == 1 || d[start] != '0') && v <= uint64(maxNum) {
				c.toks = append(c.toks, int32(v))
				c.largest = max(c.largest, int32(v))
			} else {
				c.toks = append(c.toks, int32(-1-len(c.strs)))
				c.strs = append(c.strs, d[start:i])
			}
		}
		for i < n && class[d[i]] == clSpace {
			i++
		}
		if i < n {
			switch class[d[i]] {
			case clOther:
				c.bad = true // a third field
				return c
			case clComment:
				i = lineEnd(d, i)
			default: // '\n'
				i++
			}
		}
	}
	return c
}

// lineEnd returns the index after the '\n' that ends the line holding
// d[i], or len(d).
func lineEnd(d string, i int) int {
	if j := strings.IndexByte(d[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(d)
}

// number numbers the chunks' nodes in the order of their first appearance
// and returns their names; it writes each token's node index over the
// token, so that the chunks' tokens become the edges' ends (src, dst pairs).
// Numeric ids go through a table indexed by value, the others through a
// map: an id is only ever in one of the two, as in parseLines. The names of
// numeric ids are written into a few large arenas, not allocated one by
// one; size (the input's) bounds what they need.
func number(chunks []chunk, maxNum, size int) (names []string, err error) {
	total, largest := 0, int32(-1)
	for i := range chunks {
		total += len(chunks[i].toks)
		largest = max(largest, chunks[i].largest)
	}
	// The table of numeric ids is sized once, to the largest.
	p := parser{ids: make(map[string]int32), names: make([]string, 0, min(total, int(largest)+1)+16), maxNum: maxNum,
		num: make([]int32, largest+1)}
	arena := digits{size: max(min(size, 1<<20), 64)}
	for ci := range chunks {
		c := &chunks[ci]
		toks := c.toks
		for k, t := range toks {
			if t >= 0 {
				if i := p.num[t]; i > 0 {
					toks[k] = i - 1
					continue
				}
				id, err := p.add(arena.format(t))
				if err != nil {
					return nil, err
				}
				p.num[t] = id + 1
				toks[k] = id
				continue
			}
			name := c.strs[-1-t]
			id, ok := p.ids[name]
			if !ok {
				if id, err = p.add(name); err != nil {
					return nil, err
				}
				p.ids[name] = id
			}
			toks[k] = id
		}
		c.strs = nil
	}
	return p.names, nil
}

// endsOf returns the chunks' tokens, once numbered: the edges' ends.
func endsOf(chunks []chunk) [][]int32 {
	ends := make([][]int32, len(chunks))
	for i := range chunks {
		ends[i] = chunks[i].toks
	}
	return ends
}

// digits formats numbers into arenas of bytes that are never written
// again, and returns them as strings that share the arenas' memory.
type digits struct {
	size int    // bytes of a new arena
	buf  []byte // the current arena
}

// format returns v (≥ 0) in decimal.
func (a *digits) format(v int32) string {
	if len(a.buf)+10 > cap(a.buf) {
		a.buf = make([]byte, 0, a.size)
	}
	start := len(a.buf)
	a.buf = strconv.AppendUint(a.buf, uint64(v), 10)
	return unsafe.String(&a.buf[start], len(a.buf)-start)
}
