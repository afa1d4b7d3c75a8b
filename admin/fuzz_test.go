package admin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzHistogramQuery: /api/histogram answers any query string (the
// endpoint's only query parameters, kernel and of) without panicking, and
// as the parameters say: 200 with the kernel's histogram (its name and
// which histogram echoed, non-empty buckets in increasing order whose
// counts add up to the count) for a known kernel and of; 404 naming the
// kernel, as plain text, for an unknown one; 400 for an unknown of. An
// error's body is in proportion to the query, and never HTML.
func FuzzHistogramQuery(f *testing.F) {
	for _, s := range []string{"", "kernel=z", "kernel=z&of=latency", "kernel=a&of=queue_delay", "kernel=q&of=handler",
		"kernel=z&of=bogus", "kernel=nope", "kernel=z&kernel=a", "of=latency&kernel=z", "kernel=%7A", "kernel=%zz",
		"kernel=z;of=handler", "kernel=<script>alert(1)</script>", "kernel=z&of=", "kernel=z&of=Latency", "=&&=", "kernel",
		"kernel=z%00", "kernel=" + strings.Repeat("%41", 100)} {
		f.Add(s)
	}
	h := New(WithKernels(fakeKernels))
	known := map[string]uint64{}
	for _, k := range fakeKernels() {
		known[k.Kernel] = 0
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if len(raw) > 8<<10 {
			raw = raw[:8<<10]
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, &http.Request{Method: "GET", URL: &url.URL{Path: "/api/histogram", RawQuery: raw}, Header: http.Header{}})
		q, _ := url.ParseQuery(raw) // as r.URL.Query() reads it: bad pairs dropped
		kernel, of := q.Get("kernel"), q.Get("of")
		if of == "" {
			of = "latency"
		}
		_, isKnown := known[kernel]
		goodOf := of == "latency" || of == "queue_delay" || of == "handler"
		body, ctype := rec.Body.String(), rec.Header().Get("Content-Type")
		if rec.Code != http.StatusOK {
			if !strings.HasPrefix(ctype, "text/plain") || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("%q: error %d served as %q (nosniff %q)", raw, rec.Code, ctype, rec.Header().Get("X-Content-Type-Options"))
			}
			if len(body) > len(kernel)+100 {
				t.Fatalf("%q: a %d-byte error body", raw, len(body))
			}
		}
		switch {
		case !isKnown:
			if rec.Code != http.StatusNotFound || body != "no kernel "+kernel+"\n" {
				t.Fatalf("%q: unknown kernel %q answered %d %q", raw, kernel, rec.Code, body)
			}
		case !goodOf:
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("%q: of=%q answered %d %q", raw, of, rec.Code, body)
			}
		default:
			var got Histogram
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK || ctype != "application/json" {
				t.Fatalf("%q: %d %q %v: %s", raw, rec.Code, ctype, err, body)
			}
			if got.Kernel != kernel || got.Of != of {
				t.Fatalf("%q: the histogram of %q/%q, want %q/%q", raw, got.Kernel, got.Of, kernel, of)
			}
			var sum uint64
			for i, b := range got.Buckets {
				sum += b.Count
				if b.Count == 0 || (b.Hi != 0 && b.Hi <= b.Lo) || (b.Hi == 0 && i != len(got.Buckets)-1) ||
					(i > 0 && b.Lo < got.Buckets[i-1].Hi) {
					t.Fatalf("%q: bucket %d of %+v", raw, i, got.Buckets)
				}
			}
			if sum != got.Count {
				t.Fatalf("%q: buckets add up to %d, count %d", raw, sum, got.Count)
			}
		}
	})
}
