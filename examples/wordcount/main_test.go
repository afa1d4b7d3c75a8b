package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
}

// reference counts every word of lines in each sliding window holding its
// time, ignoring lateness.
func reference(lines []Line, size, slide int64) map[string]int {
	out := map[string]int{}
	for _, l := range lines {
		for _, w := range strings.Fields(l.Text) {
			start := l.TS - ((l.TS%slide)+slide)%slide
			for s := start; s+size > l.TS; s -= slide {
				out[fmt.Sprintf("%d %s", s, w)]++
			}
		}
	}
	return out
}

// parse reads the printed windows back into (start word) → count.
func parse(t *testing.T, out []byte) map[string]int {
	got := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var start, end int64
		line := sc.Text()
		i := strings.IndexByte(line, ')')
		if _, err := fmt.Sscanf(strings.ReplaceAll(line[:i+1], " ", ""), "[%d,%d)", &start, &end); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		for f := range strings.FieldsSeq(line[i+1:]) {
			var n int
			word, count, _ := strings.Cut(f, "=")
			fmt.Sscan(count, &n)
			got[fmt.Sprintf("%d %s", start, word)] += n
		}
	}
	return got
}

// TestCountsMatchReference: with a lateness above the jitter no word is
// late, and the counts of every window (keyed over four instances, merged
// from two splitters) equal a sequential count.
func TestCountsMatchReference(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := Config{Lines: 3000, WindowMS: 1000, SlideMS: 250, LatenessMS: 300, JitterMS: 300, Top: len(vocabulary), Seed: 7}
	var buf bytes.Buffer
	res, err := Run(ctx, cfg, &buf)
	if err != nil {
		t.Fatal(err)
	}
	want := reference(Generate(cfg.Lines, cfg.JitterMS, cfg.Seed), cfg.WindowMS, cfg.SlideMS)
	got := parse(t, buf.Bytes())
	if res.Late != 0 || len(got) != len(want) {
		t.Fatalf("late %d, %d (window, word) counts, want 0 and %d", res.Late, len(got), len(want))
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("%s: %d, want %d", k, got[k], n)
		}
	}
}

// TestLateWordsGoToTheSide: with a lateness below the jitter some words
// are late; each word is either counted in a window or on the side output.
func TestLateWordsGoToTheSide(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := Config{Lines: 3000, WindowMS: 200, SlideMS: 100, LatenessMS: 0, JitterMS: 500, Top: len(vocabulary), Seed: 3}
	var buf bytes.Buffer
	res, err := Run(ctx, cfg, &buf)
	if err != nil {
		t.Fatal(err)
	}
	words := int64(0)
	for _, l := range Generate(cfg.Lines, cfg.JitterMS, cfg.Seed) {
		words += int64(len(strings.Fields(l.Text)))
	}
	if res.Late == 0 {
		t.Fatal("no late words: the test proves nothing")
	}
	// A word on time is counted in one or two windows.
	if res.Counted < words-res.Late || res.Counted > 2*(words-res.Late) {
		t.Fatalf("%d counted, %d late of %d words", res.Counted, res.Late, words)
	}
}
