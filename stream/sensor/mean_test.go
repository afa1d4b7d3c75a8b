package sensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// windowMeans runs input through the pipeline with cfg and returns the
// mean column of the output by sensor name (one window per sensor).
func windowMeans(t *testing.T, cfg Config, input string) map[string]float64 {
	t.Helper()
	out, rej, _ := runString(t, cfg, strings.NewReader(input))
	if rej != "" {
		t.Fatalf("rejects:\n%s", rej)
	}
	means := map[string]float64{}
	for _, ln := range strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:] {
		f := strings.Split(ln, ",")
		m, err := strconv.ParseFloat(f[5], 64)
		if err != nil {
			t.Fatalf("%q: %v", ln, err)
		}
		means[f[0]] = m
	}
	return means
}

// TestMeanHugeValues checks that windows of finite values near the largest
// float64, whose plain sum overflows, get the finite, right mean.
func TestMeanHugeValues(t *testing.T) {
	const big = "1.7976931348623157e308"
	cases := map[string]struct {
		values []string
		want   float64
	}{
		"three 1e308":      {[]string{"1e308", "1e308", "1e308"}, 1e308},
		"max twice":        {[]string{big, big}, math.MaxFloat64},
		"max ten times":    {[]string{big, big, big, big, big, big, big, big, big, big}, math.MaxFloat64},
		"-max three times": {[]string{"-" + big, "-" + big, "-" + big}, -math.MaxFloat64},
		"overflow; cancel": {[]string{"1e308", "1e308", "-1e308", "-1e308"}, 0},
		"overflow; then 2": {[]string{"1.5e308", "1.5e308", "-1e308", "2"}, 0.5e308 + 0.5},
	}
	var b strings.Builder
	for name, c := range cases {
		for i, v := range c.values {
			fmt.Fprintf(&b, "%s,%d,%s\n", name, i, v)
		}
	}
	input := b.String()
	for _, cfg := range []Config{{WindowMS: 1000, Scale: 1}, {WindowMS: 1000, Scale: 1, Streaming: true}} {
		got := windowMeans(t, cfg, input)
		for name, c := range cases {
			m, ok := got[name]
			switch {
			case !ok:
				t.Errorf("%s: no window", name)
			case math.IsInf(m, 0) || math.IsNaN(m):
				t.Errorf("%s: mean %v, want %v", name, m, c.want)
			case math.Abs(m-c.want) > 1e-15*math.Abs(c.want):
				t.Errorf("%s: mean %v, want %v", name, m, c.want)
			}
		}
	}
}

// TestMeanOrdinaryData checks that on ordinary data the mean is the plain
// sum over the count, in input order, within 1e-12 relative.
func TestMeanOrdinaryData(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var b strings.Builder
	sums := map[string]float64{}
	counts := map[string]int{}
	for i := range 20000 {
		name := fmt.Sprintf("s%d", rng.IntN(17))
		v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(12)-4))
		fmt.Fprintf(&b, "%s,%d,%s\n", name, i, strconv.FormatFloat(v, 'g', -1, 64))
		sums[name] += v
		counts[name]++
	}
	got := windowMeans(t, Config{WindowMS: 1 << 40, Scale: 1}, b.String())
	if len(got) != len(sums) {
		t.Fatalf("%d windows, want %d", len(got), len(sums))
	}
	for name, s := range sums {
		want := s / float64(counts[name])
		if d := math.Abs(got[name] - want); d > 1e-12*math.Abs(want) {
			t.Errorf("%s: mean %v, plain sum/count %v (relative difference %g)", name, got[name], want, d/math.Abs(want))
		}
	}
}
