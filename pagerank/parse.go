package pagerank

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unsafe"
)

// LineError is one malformed line of an edge list.
type LineError struct {
	Line   int    // 1-based line number
	Fields int    // how many fields the line has (a well-formed line has 2)
	Reason string // what is wrong with it
}

// ParseError reports the malformed lines of an edge list. Nothing is built
// from an input with malformed lines.
type ParseError struct {
	// Name is the input's name (a file name), or empty.
	Name string
	// Lines are the first malformed lines, at most MaxLineErrors of them, in
	// order.
	Lines []LineError
	// Count is the number of malformed lines, including those not in Lines.
	Count int
}

// MaxLineErrors is how many malformed lines a ParseError keeps.
const MaxLineErrors = 100

// listedLines is how many malformed lines ParseError.Error lists.
const listedLines = 10

// Error lists the malformed lines by number, the first ten of them in full.
func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Name != "" {
		b.WriteString(e.Name)
		b.WriteString(": ")
	}
	noun := "lines"
	if e.Count == 1 {
		noun = "line"
	}
	fmt.Fprintf(&b, "%d malformed %s (want \"src dst\"): ", e.Count, noun)
	for i, l := range e.Lines[:min(len(e.Lines), listedLines)] {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "line %d: %s", l.Line, l.Reason)
	}
	if more := e.Count - min(len(e.Lines), listedLines); more > 0 {
		fmt.Fprintf(&b, "; and %d more", more)
	}
	return b.String()
}

// LineNumbers returns the numbers of the malformed lines that e holds.
func (e *ParseError) LineNumbers() []int {
	nums := make([]int, len(e.Lines))
	for i, l := range e.Lines {
		nums[i] = l.Line
	}
	return nums
}

// Parse reads an edge list: one directed edge "src dst" a line, the two node
// ids separated by spaces or tabs. A node id is any string without
// whitespace; a '#' starts a comment that runs to the end of the line (as in
// networkx's read_edgelist), and blank lines are ignored, as is a '\r'
// before a line's end. Nodes are numbered in the order of their first
// appearance. A UTF-8 byte order mark at the very start is skipped. Any
// line with other than two fields makes Parse fail with a *ParseError that
// lists them by line number; no graph is returned then.
//
// The graph's Names share the memory of the input, which is read whole.
func Parse(r io.Reader) (*Graph, error) {
	g, _, err := ParseTimed(r)
	return g, err
}

// ParseTimed is Parse that also reports how long each phase took.
func ParseTimed(r io.Reader) (*Graph, ParseTimings, error) {
	start := time.Now()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, ParseTimings{}, fmt.Errorf("pagerank: reading edge list: %w", err)
	}
	read := time.Since(start)
	g, t, err := parseTimed(owned(data))
	t.Read = read
	return g, t, err
}

// ParseFile reads the edge list in the named file (see Parse). A
// *ParseError it returns carries the file's name.
func ParseFile(name string) (*Graph, error) {
	g, _, err := ParseFileTimed(name)
	return g, err
}

// owned turns a buffer that nothing else refers to, and that nothing will
// modify, into a string without copying it.
func owned(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	return unsafe.String(&data[0], len(data))
}

// ParseBytes parses an edge list held in memory (see Parse). It copies data.
func ParseBytes(data []byte) (*Graph, error) { return ParseString(string(data)) }

// ParseString parses an edge list held in a string (see Parse). The graph's
// Names are substrings of data.
func ParseString(data string) (*Graph, error) {
	g, _, err := parseTimed(data)
	return g, err
}

// parseLines is the line-by-line parser: the reference the fast scanner
// (scan.go) is tested against, and what reports the malformed lines of an
// input the scanner rejects.
func parseLines(data string) (*Graph, error) {
	data = strings.TrimPrefix(data, "\uFEFF")
	// A line is some 10–20 bytes: size the tables once.
	estimate := len(data) / 16
	p := parser{ids: make(map[string]int32), names: make([]string, 0, estimate/2), ends: make([]int32, 0, 2*estimate),
		maxNum: min(max(len(data)/2, 1<<16), maxNumeric)}
	line := 0
	for len(data) > 0 {
		line++
		var l string
		if i := strings.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, ""
		}
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		a, rest := field(l)
		if a == "" {
			continue // blank or comment
		}
		b, rest := field(rest)
		if extra, _ := field(rest); b == "" || extra != "" {
			p.malformed(line, l)
			continue
		}
		if p.err.Count > 0 {
			continue // only looking for more malformed lines
		}
		if err := p.edge(a, b); err != nil {
			return nil, err
		}
	}
	if p.err.Count > 0 {
		return nil, &p.err
	}
	return build(p.names, p.ends)
}

// parser accumulates an edge list's nodes and edges.
type parser struct {
	ids    map[string]int32 // node index by name
	num    []int32          // node index + 1 by numeric name (0: not seen)
	maxNum int              // the largest numeric name num may hold
	names  []string
	ends   []int32 // src, dst of each edge
	err    ParseError
}

// maxNumeric bounds the table of numeric names (4 bytes an entry).
const maxNumeric = 1 << 26

// edge records the edge a → b, numbering new nodes.
func (p *parser) edge(a, b string) error {
	u, err := p.id(a)
	if err != nil {
		return err
	}
	v, err := p.id(b)
	if err != nil {
		return err
	}
	p.ends = append(p.ends, u, v)
	return nil
}

// id returns the index of the node named name, numbering it if it is new.
// Names that are small decimal numbers in canonical form (most edge lists
// number their nodes) are looked up in a table instead of the map: it is
// several times faster, and a name is still only ever in one of the two.
func (p *parser) id(name string) (int32, error) {
	if v, ok := p.numeric(name); ok {
		if v >= len(p.num) { // grow geometrically, up to maxNum
			size := max(v+1, min(2*len(p.num)+1024, p.maxNum+1))
			p.num = append(p.num, make([]int32, size-len(p.num))...)
		}
		if i := p.num[v]; i > 0 {
			return i - 1, nil
		}
		i, err := p.add(name)
		p.num[v] = i + 1
		return i, err
	}
	if i, ok := p.ids[name]; ok {
		return i, nil
	}
	i, err := p.add(name)
	p.ids[name] = i
	return i, err
}

// add numbers a new node.
func (p *parser) add(name string) (int32, error) {
	if len(p.names) >= maxNodes {
		return 0, fmt.Errorf("pagerank: more than %d nodes", maxNodes)
	}
	p.names = append(p.names, name)
	return int32(len(p.names) - 1), nil
}

// numeric parses name as a decimal number without sign or leading zeros,
// at most p.maxNum.
func (p *parser) numeric(name string) (int, bool) {
	if len(name) > 9 || name[0] == '0' && len(name) > 1 {
		return 0, false
	}
	v := 0
	for i := range len(name) {
		c := name[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, v <= p.maxNum
}

// malformed records line number n, whose comment-free text is l.
func (p *parser) malformed(n int, l string) {
	fields := 0
	for f, rest := field(l); f != ""; f, rest = field(rest) {
		fields++
	}
	p.err.Count++
	if len(p.err.Lines) < MaxLineErrors {
		noun := "fields"
		if fields == 1 {
			noun = "field"
		}
		p.err.Lines = append(p.err.Lines, LineError{Line: n, Fields: fields,
			Reason: fmt.Sprintf("%d %s, want 2", fields, noun)})
	}
}

// field returns the first whitespace-separated field of l ("" if none) and
// what follows it.
func field(l string) (f, rest string) {
	i := 0
	for i < len(l) && isSpace(l[i]) {
		i++
	}
	if i == len(l) {
		return "", ""
	}
	j := i + 1
	for j < len(l) && !isSpace(l[j]) {
		j++
	}
	return l[i:j], l[j:]
}

// isSpace reports whether c separates fields: ASCII space, tab, carriage
// return, vertical tab or form feed.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}
