package stream

import "hash/maphash"

// Router picks which instances of an edge's downstream stage get an element.
type Router[T any] interface {
	// route appends to dst the instances (of n) that get v.
	route(e *edgeOut[T], v T, n int, dst []int) []int
}

type roundRobin[T any] struct{}

func (roundRobin[T]) route(e *edgeOut[T], _ T, n int, dst []int) []int {
	i := e.rr % uint64(n)
	e.rr++
	return append(dst, int(i))
}

// RoundRobin sends each element to one instance, in turn (the default).
func RoundRobin[T any]() Router[T] { return roundRobin[T]{} }

type broadcast[T any] struct{}

func (broadcast[T]) route(_ *edgeOut[T], _ T, n int, dst []int) []int {
	for i := range n {
		dst = append(dst, i)
	}
	return dst
}

// Broadcast sends every element to every instance.
func Broadcast[T any]() Router[T] { return broadcast[T]{} }

type keyBy[T any, K comparable] struct {
	key  func(T) K
	seed maphash.Seed
}

func (k keyBy[T, K]) route(_ *edgeOut[T], v T, n int, dst []int) []int {
	if n == 1 {
		return append(dst, 0)
	}
	return append(dst, int(maphash.Comparable(k.seed, k.key(v))%uint64(n)))
}

// keySeed is the hash seed of KeyBy: one per process, so that a key goes to
// the same instance on every edge partitioned by it.
var keySeed = maphash.MakeSeed()

// KeyBy partitions by key: every element with the same key goes to the same
// instance, so that a stage keeps per-key state (KeyedState) in one place.
func KeyBy[T any, K comparable](key func(T) K) Router[T] {
	return keyBy[T, K]{key: key, seed: keySeed}
}
