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

// TestCommandLine: the program follows ringactor's command-line rules: a
// bad value or a stray argument is a usage error (exit 2, one line and a
// hint), not a panic or silence; -h exits 0.
func TestCommandLine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-lines", "-5"}, 2, "wordcount: -lines must be at least 0, got -5\nRun 'wordcount -h' for usage.\n"},
		{[]string{"-slide-ms", "2000"}, 2, "wordcount: -slide-ms must be 1 to -window-ms (1000), got 2000\n"},
		{[]string{"-top", "0"}, 2, "wordcount: -top must be at least 1"},
		{[]string{"extra"}, 2, "wordcount: unexpected argument \"extra\"\n"},
		{[]string{"-nope"}, 2, "wordcount: flag provided but not defined: -nope\n"},
		{[]string{"-h"}, 0, "Usage: wordcount [-lines N]"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(ctx, tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"-lines", "200"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "late words") {
		t.Errorf("a run: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
