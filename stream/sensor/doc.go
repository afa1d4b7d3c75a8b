// Package sensor is a streaming sensor pipeline built as a stream graph
// (package stream) of ring kernels:
//
//	reader ─chunks─▶ parse ─readings─▶ scale ─▶ window ─windows─▶ sink ─▶ out
//	                                               └─ late and rejected rows ─▶ rejects
//
// Each of parse, scale, window and the two sinks is a stream stage. parse
// is a ring-kernel actor of package actors; scale is another
// (Stage.StartChain), and window and the two sinks are chained to it
// (stream's operator chaining: they run on scale's loop and get its
// packets by function call), so the graph works on two loops as the
// channel pipeline works on its goroutines: parse writes each reading in
// place in the packet that carries it (stream.Emitter.Next: no copy), and
// the packets, GraphBatch readings each, go into scale's ring. scale is a stream.MapInPlace
// stage: it scales each packet's readings where they lie, in one loop, and
// the packet itself goes on to the window stage. The
// window stage is the library's tumbling window (stream.Window); in
// streaming mode scale's output declares event time (each row's timestamp)
// and the lateness — scale passes the rows on one for one, in order, so the
// watermarks fall between the same rows as if parse declared it, and parse,
// the busiest stage, does not track them — and the watermark between the
// rows closes the windows. Its side
// output carries the late rows and, in line order with them, the rows
// parse rejected, to the rejects sink. The reader (a goroutine of Run) only
// cuts the input into chunks of whole lines, each Read's worth, and sends
// them to the graph's source with the number of their first line. The scale
// stage is pluggable (GraphOptions.Scale). RunChannels is the same stage
// code over Go channels, the baseline of `ringactor bench`.
//
// # Input
//
// CSV lines "sensor,ts_ms,value", ended by "\n" or "\r\n" (one trailing
// carriage return is removed, so CRLF files work; a UTF-8 byte order mark at
// the very start is skipped). Lines are numbered from 1, every line counted.
// Fields follow RFC 4180 within a line: a line without a '"' is split on
// every comma (the fast path); in a line with one, a field that starts with
// '"' is quoted, runs to the next lone '"', holds commas and doubled quotes
// ("" for one "), and must be followed by a comma or the end of the line,
// and an unquoted field holds no '"'. A quoted field cannot span lines. A
// line is ignored when it is blank (empty, or only spaces and tabs), and when
// it is the first non-blank line and its fields are exactly sensor, ts_ms,
// value (the optional header, quoted or not). Any other line is a row, and a
// row is rejected when
//
//   - its quoting breaks those rules: `bare " in an unquoted field (...)`,
//     `extraneous " after a quoted field`, or
//     "quoted field not closed on its line (a field cannot span lines)";
//   - it has other than 3 fields: "want 3 fields (sensor,ts_ms,value), got K";
//   - ts_ms is not a base-10 integer (optional sign, digits only) that fits in
//     an int64: `timestamp "X" is not an integer`;
//   - value is not a finite float64 as strconv.ParseFloat reads it (NaN, Inf
//     and values that overflow are rejected): `value "X" is not a finite number`;
//   - its window start, floor(ts/W)·W, does not fit in an int64 (only
//     timestamps within W of the smallest int64 can do that):
//     `timestamp T: window start out of range`;
//   - its scaled value v·Scale + Offset overflows float64:
//     "value V × scale S + offset O overflows float64 (+Inf)" (the scale
//     stage rejects it; an overflowing input is rejected by parse);
//   - it is late (streaming mode only, below).
//
// The sensor name is the first field as it is (unquoted), the empty name
// included. A rejected row is reported on the rejects writer (stderr in the
// commands) as "line N: reason", in line order, and counted; a reason quotes
// at most the first 80 bytes of the offending field (cut at the start of a
// character), followed by "…" when it is longer. When any row was
// rejected, the run ends with "rejected N rows" ("rejected 1 row") there.
// Rejected rows do not stop the run, unless Config.LimitRejects is set:
// then the first rejected row beyond Config.MaxRejects ends it with an
// error that wraps ErrTooManyRejects.
//
// # Computation
//
// Every accepted value becomes v' = v·Scale + Offset in float64, rounded
// after the product and after the sum (never a fused multiply-add).
// Rows are grouped per sensor into tumbling windows of W = WindowMS
// milliseconds: the window of timestamp ts starts at floor(ts/W)·W (floor
// for negative timestamps too, so -1 is in the window starting at -W) and
// holds the timestamps start ≤ ts < start+W. For each (sensor, window) the
// output has count, min, max and mean of v': min and max as Go's builtins
// compute them (−0 is below +0), the mean as the float64 sum of v' in input
// order divided by the count. When that sum overflows although every v' is
// finite (values near ±1e308), the mean is the float64 sum of v'·2⁻⁶⁴ in
// input order, divided by the count, times 2⁶⁴, kept within [min, max]: it
// is finite. Only an infinite v' (a scale or offset that overflows) makes
// the mean ±Inf or NaN.
//
// # Output
//
// CSV on the output writer: the header "sensor,window_start_ms,count,min,max,mean",
// then one line per window. Floats are written with strconv.FormatFloat(v,
// 'g', -1, 64), which parses back to the same float64. Sensor names are
// quoted as encoding/csv's Writer quotes them: in double quotes, with their
// quotes doubled, when they hold a comma, a quote, a CR or an LF, start with
// a space character, or are `\.`.
//
// By default (Config.Streaming false) every window is held until the end of
// input, which makes the result exact whatever the order of the events, and
// the rows are ordered by sensor name (byte order), then window start.
//
// # Streaming mode and lateness
//
// With Config.Streaming (the --lateness-ms flag of the commands), windows
// are emitted while the input streams, so that memory stays bounded on
// endless input. The watermark is the largest timestamp of any accepted row
// so far, across all sensors (one global clock: a sensor that lags behind
// the others sees its events rejected as late). A window closes once the
// watermark is at least L = LatenessMS past its end:
//
//	watermark ≥ start + W + L
//
// A row whose window has closed, judged against the watermark of the rows
// before it, is rejected as late: "line N: late event for window S of
// sensor "X": newest timestamp T ≥ window end E + lateness L". That covers
// every event for a window already emitted, and also an event that would
// open a window that has already closed, so no window is ever emitted twice
// and the output does not depend on how the input was cut into batches.
//
// The window stage emits each window as the watermark closes it (the
// windows closing at one watermark ordered by start, then sensor name), and
// the rest at the end of input (the final watermark). A closed window never
// changes, and the windows closing later all start later, so the output is
// ordered by window start, then sensor name (byte order) — the order in
// which windows close — from the first line to the last, whatever the
// batching. The sink writes the closed windows as they arrive and flushes
// after each packet of them.
//
// # Backpressure and memory
//
// Every loop's queue is bounded (a ring of Config.RingCapacity packets of at
// most GraphBatch readings, and an overflow of as many): a full
// stage makes the stage before it wait, and the reader's Send waits when
// parse is full, so a fast reader never reads further ahead than the queues
// hold — some 2·RingCapacity·ChunkBytes bytes of input at parse. Chunk
// buffers, row batches and packets are recycled. Without streaming the
// window stage holds one aggregate per (sensor, window) seen; with streaming
// only the windows still open, at most about (L+W)/W+1 per sensor when the
// timestamps advance.
//
// Parsing allocates nothing per row: fields are found with bytes.IndexByte
// (only a line that holds a quote takes the slower RFC 4180 path), the
// timestamp is parsed in place, sensor names are interned once and travel
// downstream as small integer ids.
package sensor
