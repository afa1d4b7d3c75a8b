package sensor

import "github.com/ringactor/ringactor/messages"

// Chunk is parse's message: whole input lines, and the number of the first.
// The final chunk (Final set) carries no data and ends the stream.
type Chunk struct {
	Data  []byte  // complete lines; the last may lack its "\n" at end of input
	Line  int64   // number of the first line of Data, from 1
	Final bool    // end of input: flush everything downstream
	buf   *[]byte // the pooled buffer Data lies in, which parse recycles
}

// Row is one accepted input row. Sensor is an interned id: Batch.NewNames
// carries each name once, in id order.
type Row struct {
	TS     int64   // timestamp, ms
	V      float64 // value (scaled once it has left the scale stage)
	Line   int64   // input line number
	Sensor uint32  // sensor id
}

// Reject is one rejected row: its line number and why.
type Reject struct {
	Line   int64
	Reason string
}

// Stats counts what the pipeline has seen so far.
type Stats struct {
	Lines    int64 // input lines, blank and header included
	Rows     int64 // data rows: lines that are neither blank nor the header
	Rejected int64 // rows rejected, late ones included
	Late     int64 // rows rejected as late (streaming mode)
	Sensors  int64 // distinct sensor names among the rows that parsed (late ones included)
	Windows  int64 // windows written
}

// Batch is what parse sends scale and scale sends window: the rows of one
// chunk, the sensor names first seen in it, and the rows it rejected.
type Batch struct {
	Rows     []Row
	NewNames []string // names of sensor ids from the previous count on
	Rejects  []Reject // in line order
	Final    bool     // the input has ended
	Stats    Stats    // parse's counters so far (Lines, Rows, Rejected)
}

// WindowStat is one output row: the aggregate of one (sensor, window).
type WindowStat struct {
	Sensor   string
	Start    int64 // window start, ms
	Count    int64
	Min, Max float64
	Mean     float64
}

// Emit is what window sends the sink: the windows that closed, in output
// order, and the rejected rows of the batch, in line order.
type Emit struct {
	Windows []WindowStat
	Rejects []Reject
	Final   bool
	Stats   Stats // counters so far (Windows not yet counted)
}

// Progress is the sink's reply to each Emit; the one to the final Emit has
// Done set and the run's totals.
type Progress struct {
	Done  bool
	Stats Stats
}

// init gives the pipeline's messages their stable type ids.
func init() {
	messages.MustRegister[Chunk]("ringactor.stream.sensor.Chunk")
	messages.MustRegister[*Batch]("ringactor.stream.sensor.Batch")
	messages.MustRegister[*Emit]("ringactor.stream.sensor.Emit")
	messages.MustRegister[Progress]("ringactor.stream.sensor.Progress")
}
