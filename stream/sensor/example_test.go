package sensor_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/stream/sensor"
)

// input is the examples' CSV: a header, a bad value and an event that
// arrives late.
const input = `sensor,ts_ms,value
a,-1,1.5
b,250,2
a,999,x
a,20,0.5
b,1999,-3
a,1500,1
a,-500,7
`

// Run holds every window until the end of input: the result is exact
// whatever the order of the events, and ordered by sensor, then window.
func ExampleRun() {
	cfg := sensor.DefaultConfig() // 1000 ms windows
	cfg.Scale, cfg.Offset = 2, 0  // v' = 2v
	var rejects strings.Builder
	st, err := sensor.Run(context.Background(), cfg, strings.NewReader(input), os.Stdout, &rejects,
		actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(rejects.String())
	fmt.Printf("%d rows, %d rejected, %d windows\n", st.Rows, st.Rejected, st.Windows)
	// Output:
	// sensor,window_start_ms,count,min,max,mean
	// a,-1000,2,3,14,8.5
	// a,0,1,1,1,1
	// a,1000,1,2,2,2
	// b,0,1,4,4,4
	// b,1000,1,-6,-6,-6
	// line 4: value "x" is not a finite number
	// rejected 1 row
	// 7 rows, 1 rejected, 5 windows
}

// With lateness, windows stream out as they close — ordered by window
// start, then sensor — and an event for a closed window is rejected.
func ExampleRun_lateness() {
	cfg := sensor.DefaultConfig()
	cfg.Scale = 2
	cfg.Streaming, cfg.LatenessMS = true, 0
	var rejects strings.Builder
	st, err := sensor.Run(context.Background(), cfg, strings.NewReader(input), os.Stdout, &rejects,
		actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(rejects.String())
	fmt.Printf("%d rows, %d rejected (%d late), %d windows\n", st.Rows, st.Rejected, st.Late, st.Windows)
	// Output:
	// sensor,window_start_ms,count,min,max,mean
	// a,-1000,1,3,3,3
	// a,0,1,1,1,1
	// b,0,1,4,4,4
	// a,1000,1,2,2,2
	// b,1000,1,-6,-6,-6
	// line 4: value "x" is not a finite number
	// line 8: late event for window -1000 of sensor "a": newest timestamp 1999 ≥ window end 0 + lateness 0
	// rejected 2 rows
	// 7 rows, 2 rejected (1 late), 5 windows
}
