// Package stream builds streaming jobs — sources, stages and sinks joined
// by typed edges — on ringactor's ring kernels: every stage instance is a
// ring kernel of package actors (a persistent loop fed by a bounded ring,
// owned by a supervised Proto.Actor actor), so a graph has the framework's
// guarantees: bounded queues with backpressure, exactly one outcome per
// message, and telemetry.
//
// # Declaring a graph
//
//	g := stream.New()
//	lines := stream.NewSource[Line](g, "lines").EventTime(func(l Line) int64 { return l.TS }, 200)
//	split := stream.FlatMap(g, "split", func(l Line, out *stream.Emitter[Word]) error {
//		for w := range strings.FieldsSeq(l.Text) {
//			out.Emit(Word{TS: l.TS, W: w})
//		}
//		return nil
//	}, stream.Parallelism(2))
//	counts, late := stream.Window(g, "count", spec, stream.Parallelism(4))
//	sink, ch := stream.ToChan[Count](g, "out", 64)
//	stream.Connect(lines, split)
//	stream.Connect(split, counts, stream.KeyBy(func(w Word) string { return w.W }))
//	stream.Connect(counts, sink)
//	...
//	g.Start(ctx); lines.Send(ctx, l); ...; g.Drain(ctx); g.Stop(ctx)
//
// A stage's functions (Funcs) get each input element and an Emitter: Emit
// zero or more outputs (EmitAll a slice of them: to a single downstream
// instance it copies them into the packets in bulk; Next hands out the next
// output's slot to write in place — in the pending packet itself where the
// output feeds one instance — the cheaper way for a stage that builds many
// outputs one at a time, such as a parser of chunks). Timer runs for processing-time timers set with
// Context.SetTimer, Watermark when event time advances, Flush after each
// packet, Drain once at the end of the stream. They all run on the
// instance's loop, one at a time, so a stage keeps state (KeyedState for
// per-key state) without locks. NewKernelStage makes an existing actors
// ring kernel (a device kernel included) a stage.
//
// MapInPlace is a stage that changes its elements where they lie, a
// packet at a time: its function gets a packet's elements as a slice and
// transforms them in place, and where its output leads to one instance the
// packet itself goes on (no call and no copy per element). Its function's
// error or panic is the outcome of every element of the run it was given.
//
// Edges are typed: Connect(Outlet[T], Inlet[T]) does not compile when the
// element types differ. An edge that would close a cycle is ErrCycle at
// Connect and at Start. Routing: RoundRobin (the default), Broadcast, or
// KeyBy across a stage's parallel instances; several edges may leave an
// outlet (each gets every element) and several may enter a stage (a
// fan-in: each upstream instance's order is kept).
//
// # Outcomes and backpressure
//
// Every element admitted into a stage gets exactly one outcome: handled, or
// a *StageError (the function's error, a panic — ErrPanic, the panic value
// in StageError.Panic, the state kept — or ErrStopped when Stop came first)
// given to the graph's error handler (WithErrorHandler) and counted in
// Stats. Once drained, In = Done + Failed for every instance.
//
// Emitted elements travel in packets (WithBatch elements at most), one ring
// message each. A full downstream ring makes Emit wait — that is the
// backpressure, from the sinks back to Source.Send — and nothing is
// buffered beyond the rings (WithCapacity packets and as many of overflow
// per instance) and each emitter's one pending packet per target. A
// packet's array is recycled once its receiver has handled it (one pool per
// element type and batch size, shared by the process's graphs); a sender's
// end of stream travels in its last packet, with its last elements and
// watermark.
//
// # Operator chaining
//
// A stage whose only input is one instance of a stage (one edge, both of
// parallelism 1) runs on that instance's loop instead of a ring kernel of
// its own, as Flink chains operators: its upstream hands it each packet by
// function call. It sees exactly what its ring would have delivered (the
// same elements in the same order, the same watermarks between them, Flush
// after each packet), keeps its own outcomes and timers, and holds its
// upstream back while it waits on its own downstream, so backpressure and
// the buffering bound are kept; what goes away is a ring, a reply and a
// goroutine hand-off per packet. Chaining is the default. Stage.StartChain
// gives one stage a loop of its own (a pipeline boundary: it then works in
// parallel with its upstream, worth it where both do enough per element to
// keep a core busy); WithChaining(false) turns chaining off for a graph.
// StageStats.Chained says which instances are chained.
//
// # Event time
//
// A source (or a stage's output) declares event time with EventTime: a
// function of the element and the allowed lateness (a stage's output may
// take EventTimes instead, a function of a run of elements that writes
// their times: one call a packet where MapInPlace hands packets on). Its
// watermark, the
// largest time so far minus the lateness, travels between the elements;
// a stage's watermark is the minimum over its inputs (an ended input no
// longer counts), and math.MaxInt64 once they have all ended. Window is a
// keyed tumbling or sliding window stage on it: a window closes when the
// watermark reaches its end, and an element whose windows have all closed
// goes to the side output (Late) instead; the window stage takes a
// packet's elements in one call, with the watermarks between them that
// close no window (one input). An output's watermark is passed
// on with the next element emitted or packet sent, so consecutive advances
// with no element between them reach the downstream stage as one, and
// Watermark is called once for them.
//
// # Life
//
// Start launches every instance's ring kernel (sinks first) and wires the
// edges. Drain ends the sources, lets everything flow through (the final
// watermark closes open windows, Drain functions flush), and returns when
// every sink has taken everything. Stop terminates the kernels; what is
// still in flight fails with ErrStopped.
//
// # Telemetry
//
// Stats reads each instance's counters; the same numbers are observable
// instruments (StageIn, StageOut, StageFailed, StageLate, StageDepth,
// StageWatermarkLag) on the runtime's meter.
package stream
