package sensor

import (
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestQuotedCSV pins RFC 4180 input (quoted fields with commas and doubled
// quotes, a quoted header, the rows whose quoting is broken) and the
// quoting of the output, which encoding/csv reads back.
func TestQuotedCSV(t *testing.T) {
	input := "\"sensor\",\"ts_ms\",\"value\"\n" + // 1: a quoted header
		"\"a,b\",1,2\n" + // 2: a comma in a name
		"\"say \"\"hi\"\"\",2,3\r\n" + // 3: doubled quotes
		"plain,\"3\",\"4.5\"\n" + // 4: quoted numbers
		"\"a,b\",4,6\n" + // 5: the same sensor as line 2
		"a\"b,1,2\n" + // 6: a bare quote
		"\"a\"x,1,2\n" + // 7: text after the closing quote
		"\"open,1,2\n" + // 8: not closed on its line
		"\"x\",1\n" + // 9: 2 fields
		"\"\",5,1\n" + // 10: the empty name, quoted
		" lead,5,1\n" + // 11: a name that starts with a space
		"\\.,5,1\n" + // 12: the name `\.`
		"\"x\",\"1,5\",1\n" // 13: a quoted timestamp with a comma
	wantOut := OutputHeader + "\n" +
		",0,1,1,1,1\n" +
		"\" lead\",0,1,1,1,1\n" +
		"\"\\.\",0,1,1,1,1\n" +
		"\"a,b\",0,2,2,6,4\n" +
		"plain,0,1,4.5,4.5,4.5\n" +
		"\"say \"\"hi\"\"\",0,1,3,3,3\n"
	wantRej := "line 6: bare \" in an unquoted field (quote the whole field and double its quotes)\n" +
		"line 7: extraneous \" after a quoted field\n" +
		"line 8: quoted field not closed on its line (a field cannot span lines)\n" +
		"line 9: want 3 fields (sensor,ts_ms,value), got 2\n" +
		"line 13: timestamp \"1,5\" is not an integer\n" +
		"rejected 5 rows\n"
	for _, chunk := range []int{0, 7} {
		cfg := DefaultConfig()
		cfg.ChunkBytes = chunk
		out, rej, st := runString(t, cfg, strings.NewReader(input))
		if out != wantOut || rej != wantRej {
			t.Errorf("chunk %d: output\n%s\nwant\n%s\nrejects\n%s\nwant\n%s", chunk, out, wantOut, rej, wantRej)
		}
		if st.Rows != 12 || st.Rejected != 5 {
			t.Errorf("stats %+v", st)
		}
		ref := reference(input, cfg)
		if ref.out != wantOut || ref.rejects != wantRej {
			t.Errorf("the reference disagrees:\n%s\n%s", ref.out, ref.rejects)
		}
	}
	recs, err := csv.NewReader(strings.NewReader(wantOut)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range recs[1:] {
		names = append(names, r[0])
	}
	if want := []string{"", " lead", `\.`, "a,b", "plain", `say "hi"`}; !slices.Equal(names, want) {
		t.Errorf("encoding/csv reads the names %q, want %q", names, want)
	}
}

// TestOutputQuotingMatchesEncodingCSV checks appendField against
// encoding/csv's Writer.
func TestOutputQuotingMatchesEncodingCSV(t *testing.T) {
	for _, f := range []string{"", "a", "a b", " a", "\ta", "\u00a0a", "\u2003a", "a,b", `a"b`, `"`, "a\rb", `\.`, `\`, `.\`,
		"センサー", "é,", "a ", "\"\"", ","} {
		var want strings.Builder
		w := csv.NewWriter(&want)
		_ = w.Write([]string{f, "1"})
		w.Flush()
		if got := string(appendField(nil, f)) + ",1\n"; got != want.String() {
			t.Errorf("appendField(%q) = %q, encoding/csv writes %q", f, got, want.String())
		}
	}
}

// FuzzSplitQuoted compares the parser's RFC 4180 split of a line that holds
// a quote with encoding/csv's Reader: the same fields, or both reject it.
func FuzzSplitQuoted(f *testing.F) {
	for _, s := range []string{`"a",1,2`, `"a,b",1,2`, `"a""b",1,""`, `a"b,1,2`, `"a"b,1,2`, `"a`, `""`, `","`,
		`"",`, `,"x"`, `"a" ,1`, `"""",1,2`, `x,"y""",z`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ln string) {
		if !strings.Contains(ln, `"`) || strings.ContainsAny(ln, "\r\n") {
			return
		}
		r := csv.NewReader(strings.NewReader(ln))
		r.FieldsPerRecord = -1
		want, err := r.Read()
		if err == nil {
			if _, err2 := r.Read(); !errors.Is(err2, io.EOF) {
				t.Fatalf("%q: encoding/csv reads more than one record", ln)
			}
		}
		var p parser
		got, reason := p.splitQuoted([]byte(ln))
		if (err != nil) != (reason != "") {
			t.Fatalf("%q: encoding/csv %v, splitQuoted reason %q", ln, err, reason)
		}
		if err != nil {
			return
		}
		var gs []string
		for _, g := range got {
			gs = append(gs, string(g))
		}
		if !slices.Equal(gs, want) {
			t.Fatalf("%q: fields %q, encoding/csv %q", ln, gs, want)
		}
		if ref, bad := refFields(ln); bad != "" || !slices.Equal(ref, want) {
			t.Fatalf("%q: reference fields %q (%s), encoding/csv %q", ln, ref, bad, want)
		}
	})
}

// TestLongValueQuoted checks that a reason quotes at most 80 bytes of the
// offending field, cut at a character, with an ellipsis.
func TestLongValueQuoted(t *testing.T) {
	long := strings.Repeat("x", 1000)
	cjk := "é" + strings.Repeat("セ", 100) // the 80-byte cut falls inside a character
	input := "a,1," + long + "\n" + "a," + long + ",1\n" + "a,2," + cjk + "\na,3,short\n"
	_, rej, _ := runString(t, DefaultConfig(), strings.NewReader(input))
	want := "line 1: value \"" + strings.Repeat("x", 80) + "\"… is not a finite number\n" +
		"line 2: timestamp \"" + strings.Repeat("x", 80) + "\"… is not an integer\n" +
		"line 3: value \"é" + strings.Repeat("セ", 26) + "\"… is not a finite number\n" +
		"line 4: value \"short\" is not a finite number\n" +
		"rejected 4 rows\n"
	if rej != want {
		t.Errorf("rejects\n%s\nwant\n%s", rej, want)
	}
	if ref := reference(input, DefaultConfig()); ref.rejects != want {
		t.Errorf("the reference disagrees:\n%s", ref.rejects)
	}
	for line := range strings.Lines(rej) {
		if len(line) > 140 {
			t.Errorf("a reject line of %d bytes: %q", len(line), line)
		}
	}
}

// TestMaxRejects checks Config.LimitRejects: the run fails with
// ErrTooManyRejects on the first reject beyond MaxRejects, after writing
// the rejects up to it, and runs to the end within the limit.
func TestMaxRejects(t *testing.T) {
	input := "a,1,1\nbad\na,2,x\nb,3,3\nc\nd\n"
	for _, tc := range []struct {
		max     int64
		fail    bool
		rejects string
	}{
		{0, true, "line 2: want 3 fields (sensor,ts_ms,value), got 1\n"},
		{2, true, "line 2: want 3 fields (sensor,ts_ms,value), got 1\nline 3: value \"x\" is not a finite number\nline 5: want 3 fields (sensor,ts_ms,value), got 1\n"},
		{4, false, ""},
		{5, false, ""},
	} {
		for _, chunk := range []int{0, 1} {
			cfg := DefaultConfig()
			cfg.LimitRejects, cfg.MaxRejects, cfg.ChunkBytes = true, tc.max, chunk
			var out, rej strings.Builder
			st, err := Run(testCtx(t), cfg, strings.NewReader(input), &out, &rej, quiet()...)
			if !tc.fail {
				if err != nil || st.Rejected != 4 || !strings.HasSuffix(rej.String(), "rejected 4 rows\n") {
					t.Errorf("max %d, chunk %d: %v, %+v, rejects %q", tc.max, chunk, err, st, rej.String())
				}
				continue
			}
			if !errors.Is(err, ErrTooManyRejects) || !strings.Contains(err.Error(), "more than") {
				t.Errorf("max %d, chunk %d: error %v, want ErrTooManyRejects", tc.max, chunk, err)
			}
			if rej.String() != tc.rejects {
				t.Errorf("max %d, chunk %d: rejects\n%s\nwant\n%s", tc.max, chunk, rej.String(), tc.rejects)
			}
		}
	}
	bad := DefaultConfig()
	bad.LimitRejects, bad.MaxRejects = true, -1
	if err := bad.Validate(); err == nil {
		t.Error("MaxRejects -1 with LimitRejects is valid")
	}
}
