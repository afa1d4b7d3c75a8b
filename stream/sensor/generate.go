package sensor

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
)

// Synthetic describes a generated input: Rows rows for Sensors sensors
// whose timestamps advance by StepMS per row from StartMS, each shifted back
// by up to JitterMS (so events arrive out of order), with one malformed row
// in about every BadEvery (0: none).
type Synthetic struct {
	Rows     int
	Sensors  int
	Seed     uint64
	StartMS  int64
	StepMS   int64
	JitterMS int64
	BadEvery int
	Header   bool // begin with the header line
}

// DefaultSynthetic is the input of `go run ./examples/pipeline` and `ringactor pipeline`: 200,000
// rows of 16 sensors (some with non-ASCII names) over some 200 seconds that
// start in negative time, events up to 200 ms out of order, one bad row in
// about 5,000.
func DefaultSynthetic() Synthetic {
	return Synthetic{Rows: 200_000, Sensors: 16, Seed: 1, StartMS: -20_000, StepMS: 1, JitterMS: 200, BadEvery: 5000, Header: true}
}

// SensorName is the name of generated sensor i: "sensor-07", with some
// French and Japanese ones ("capteur-é-02", "センサー-03") among them.
func SensorName(i int) string {
	switch i % 8 {
	case 2:
		return fmt.Sprintf("capteur-é-%02d", i)
	case 3:
		return fmt.Sprintf("センサー-%02d", i)
	}
	return fmt.Sprintf("sensor-%02d", i)
}

// badRows are the malformed rows the generator mixes in; each is rejected
// for the reason its comment gives (a blank line is ignored).
var badRows = []string{
	"sensor-00,12",                     // 2 fields
	"sensor-00,12,1.5,extra",           // 4 fields
	"sensor-00,12.5,1",                 // timestamp not an integer
	"sensor-00,,1",                     // empty timestamp
	"sensor-00,1e3,1",                  // timestamp not an integer
	"sensor-00,99999999999999999999,1", // timestamp out of int64
	"sensor-00,12,NaN",                 // not finite
	"sensor-00,12,inf",                 // not finite
	"sensor-00,12,1e999",               // overflows to Inf
	"sensor-00,12,twelve",              // not a number
	"sensor-00,12,",                    // empty value
	"",                                 // a blank line: ignored, not rejected
}

// Generate writes the synthetic input g describes to w. The same g always
// gives the same bytes.
func Generate(w io.Writer, g Synthetic) error {
	if err := g.Validate(); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(g.Seed, g.Seed^0x9e3779b97f4a7c15))
	names := make([]string, g.Sensors)
	base := make([]float64, g.Sensors)
	for i := range names {
		names[i] = SensorName(i)
		base[i] = 10 + 5*float64(i%7)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if g.Header {
		bw.WriteString(Header + "\n")
	}
	var line []byte
	for i := range g.Rows {
		if g.BadEvery > 0 && rng.IntN(g.BadEvery) == 0 {
			bw.WriteString(badRows[rng.IntN(len(badRows))])
			bw.WriteByte('\n')
			continue
		}
		s := rng.IntN(g.Sensors)
		ts := g.StartMS + int64(i)*g.StepMS
		if g.JitterMS > 0 {
			ts -= rng.Int64N(g.JitterMS + 1)
		}
		v := base[s] + 3*math.Sin(float64(ts)/5000) + rng.NormFloat64()
		line = append(line[:0], names[s]...)
		line = append(line, ',')
		line = strconv.AppendInt(line, ts, 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, v, 'f', 2, 64)
		line = append(line, '\n')
		bw.Write(line)
	}
	return bw.Flush()
}

// Validate says what is wrong with the description g, or nil.
func (g Synthetic) Validate() error {
	switch {
	case g.Rows < 0:
		return fmt.Errorf("sensor: synthetic input: rows %d, want at least 0", g.Rows)
	case g.Sensors < 1:
		return fmt.Errorf("sensor: synthetic input: sensors %d, want at least 1", g.Sensors)
	case g.StepMS < 0:
		return fmt.Errorf("sensor: synthetic input: step %d ms, want at least 0", g.StepMS)
	case g.JitterMS < 0:
		return fmt.Errorf("sensor: synthetic input: jitter %d ms, want at least 0", g.JitterMS)
	case g.BadEvery < 0:
		return fmt.Errorf("sensor: synthetic input: one bad row every %d, want at least 0 (0: none)", g.BadEvery)
	}
	return nil
}
