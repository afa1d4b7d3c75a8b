package bench

// Interleaving: how the message-path measures share the machine.
//
// A shared machine's load drifts while a run lasts, so a measure taken
// seconds after its baseline compares two different machines. The round
// trips and the pipelined rates are therefore interleaved: each measure
// runs in rounds, in alternating order (ABBA), and its samples (round
// trips) or its messages and time (pipelined) are pooled over the rounds.
//
// The round trips of the allocation-free measures (the ring kernels and the
// Go channel) are interleaved finer still, in blocks of rttBlock round
// trips. A sequential round trip here costs one of two amounts some 50 ns
// apart, by a state of the Go scheduler that holds for a few milliseconds
// at a time (measured: with GOMAXPROCS=2 a channel ping-pong's per-chunk
// p50 moves between ~200 and ~250 ns, and the ring's between ~235 and
// ~285 ns, at the same moments; with GOMAXPROCS=1 it stays at the higher
// one). Chunks of a millisecond or so, as 5,000 round trips are, each fall
// in one state or the other, so the pooled p50 of a measure with ten of them
// landed in whichever state most of its chunks happened to see, and the
// ratio of two such p50s read 1.25–1.4 where both measures in the same state
// give 1.1–1.2: a quick run (short chunks) showed it, a full one less often.
// Blocks of rttBlock round trips (~0.15 ms) give every measure nearly the
// same mix of states, and neighbouring blocks of two measures mostly the
// same state: pairedP50Ratio compares two measures block by block (the
// median of their blocks' p50 ratios), which stays right even where the
// pooled p50s straddle the two states (a state that holds about half the
// time).
//
// Each block follows rttBlockWarm untimed round trips of its measure: the
// kernels' loops that were answering the block before yield (their wait
// strategy) for up to ~150 round trips of the next block's measure before
// they park, and the first ~150 round trips of a block without them read
// up to 20 % slower (measured, per tenth of a block over a run).
//
// A measure that allocates (Proto.Actor's requests) is not mixed into the
// blocks: its garbage would start collections during the others' blocks.
// It runs as one chunk a round, after a forced collection; the blocks of
// the others follow a forced collection of their own, so that no measure
// pays for the collections another's garbage would start during it.

import (
	"runtime"
	"slices"
	"time"
)

// Rounds of the interleaved measures, and the blocks of a round trip round.
const (
	rttRounds       = 10
	pipelinedRounds = 6
	// rttBlock is how many timed round trips a block of an allocation-free
	// measure holds.
	rttBlock = 500
	// rttBlockWarm is how many untimed round trips precede each block.
	rttBlockWarm = 250
)

// rttMeasure times len(out) sequential round trips into out.
type rttMeasure func(out []time.Duration) error

// interleaveRTT times n round trips of each measure and returns their
// samples, mixed's first, then apart's, in the order given. Each measure is
// first warmed up with warmup untimed round trips. Then come rttRounds
// rounds (the last takes the remainder of n), each of them: every measure of
// apart in turn, a chunk after a forced collection and a tenth of a chunk of
// untimed round trips; and the measures of mixed after one forced
// collection and a tenth of a chunk of untimed round trips each, interleaved
// in blocks of rttBlock round trips (each after rttBlockWarm untimed ones),
// in an order that alternates from block to block. Whether apart's chunks
// or mixed's blocks come first alternates from round to round.
func interleaveRTT(warmup, n int, mixed []rttMeasure, apart ...rttMeasure) ([][]time.Duration, error) {
	all := append(append([]rttMeasure(nil), mixed...), apart...)
	scratch := make([]time.Duration, max(warmup, n/rttRounds/10+1, rttBlockWarm))
	untimed := func(m rttMeasure, k int) error { return m(scratch[:min(max(k, 1), len(scratch))]) }
	for _, m := range all {
		if err := untimed(m, warmup); err != nil {
			return nil, err
		}
	}
	out := make([][]time.Duration, len(all))
	for i := range out {
		out[i] = make([]time.Duration, n)
	}
	done := 0 // round trips of each measure timed so far
	for r := range rttRounds {
		chunk := n / rttRounds
		if r == rttRounds-1 {
			chunk = n - done
		}
		apartFirst := r%2 == 0
		if !apartFirst {
			if err := rttBlocks(mixed, out, done, chunk, untimed); err != nil {
				return nil, err
			}
		}
		for j, m := range apart {
			// A forced collection first, so no measure pays for the
			// garbage of the one before it; then untimed round trips
			// while the collector's background work finishes and the
			// measure's memory is back in the cache, so that no measure's
			// tail is the collection's aftermath either.
			runtime.GC()
			if err := untimed(m, chunk/10); err != nil {
				return nil, err
			}
			if err := m(out[len(mixed)+j][done : done+chunk]); err != nil {
				return nil, err
			}
		}
		if apartFirst {
			if err := rttBlocks(mixed, out, done, chunk, untimed); err != nil {
				return nil, err
			}
		}
		done += chunk
	}
	return out, nil
}

// rttBlocks times chunk round trips of each measure of ms into
// out[i][at:at+chunk], in blocks of rttBlock (the order alternating from
// block to block), after a forced collection and a tenth of a chunk of
// untimed round trips of each.
func rttBlocks(ms []rttMeasure, out [][]time.Duration, at, chunk int, untimed func(rttMeasure, int) error) error {
	if len(ms) == 0 || chunk == 0 {
		return nil
	}
	runtime.GC()
	for _, m := range ms {
		if err := untimed(m, chunk/10); err != nil {
			return err
		}
	}
	for b, pos := 0, 0; pos < chunk; b++ {
		size := min(rttBlock, chunk-pos)
		for j := range ms {
			i := j
			if b%2 == 1 {
				i = len(ms) - 1 - j
			}
			if err := untimed(ms[i], rttBlockWarm); err != nil {
				return err
			}
			if err := ms[i](out[i][at+pos : at+pos+size]); err != nil {
				return err
			}
		}
		pos += size
	}
	return nil
}

// rttBlockBounds returns where the blocks of the mixed measures of
// interleaveRTT(_, n, …) end, in order: every mixed measure's samples of
// one block lie between the same bounds.
func rttBlockBounds(n int) []int {
	var ends []int
	done := 0
	for r := range rttRounds {
		chunk := n / rttRounds
		if r == rttRounds-1 {
			chunk = n - done
		}
		for pos := 0; pos < chunk; {
			pos += min(rttBlock, chunk-pos)
			ends = append(ends, done+pos)
		}
		done += chunk
	}
	return ends
}

// pairedP50Ratio is the median over the blocks of interleaveRTT of the
// ratio of a's p50 in the block to b's in the same block; a and b are the
// samples of two mixed measures. 0 when b's p50 is 0 in most blocks.
func pairedP50Ratio(a, b []time.Duration) float64 {
	var ratios []float64
	start := 0
	for _, end := range rttBlockBounds(len(a)) {
		if pb := percentile(b[start:end], 50); pb > 0 {
			ratios = append(ratios, float64(percentile(a[start:end], 50))/float64(pb))
		}
		start = end
	}
	if len(ratios) == 0 {
		return 0
	}
	slices.Sort(ratios)
	return ratios[len(ratios)/2]
}

// pipelinedMeasure sends total messages with inFlight requesters and
// reports how many it sent and how long that took.
type pipelinedMeasure func(total int) (int, time.Duration, error)

// interleavePipelined runs each measure in pipelinedRounds rounds of
// total/pipelinedRounds messages, alternating the order from round to
// round, and returns each one's messages per second over all its rounds.
func interleavePipelined(total int, ms ...pipelinedMeasure) ([]float64, error) {
	msgs := make([]int, len(ms))
	took := make([]time.Duration, len(ms))
	for r := range pipelinedRounds {
		for j := range ms {
			i := j
			if r%2 == 1 {
				i = len(ms) - 1 - j
			}
			n, el, err := ms[i](max(total/pipelinedRounds, 1))
			if err != nil {
				return nil, err
			}
			msgs[i] += n
			took[i] += el
		}
	}
	rates := make([]float64, len(ms))
	for i := range ms {
		if took[i] > 0 {
			rates[i] = float64(msgs[i]) / took[i].Seconds()
		}
	}
	return rates, nil
}
