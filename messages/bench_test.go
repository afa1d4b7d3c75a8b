package messages

import "testing"

func BenchmarkIDOf(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := IDOf[testRich](); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	v := testPing{Seq: 42, Note: "benchmark"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeEnvelope(b *testing.B) {
	e, err := NewEnvelope(testPing{Seq: 42, Note: "benchmark"})
	if err != nil {
		b.Fatal(err)
	}
	e.ReplyTo = "127.0.0.1:8090/ring-0"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeEnvelope(e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeEnvelope(b *testing.B) {
	e, err := NewEnvelope(testPing{Seq: 42, Note: "benchmark"})
	if err != nil {
		b.Fatal(err)
	}
	e.ReplyTo = "127.0.0.1:8090/ring-0"
	data, err := EncodeEnvelope(e)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeEnvelope(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRoundTripRich(b *testing.B) {
	v := sampleRich()
	b.ReportAllocs()
	for b.Loop() {
		id, data, err := Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Unmarshal(id, data); err != nil {
			b.Fatal(err)
		}
	}
}
