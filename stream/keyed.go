package stream

import "iter"

// KeyedState is per-key state inside one stage instance: a stage fed
// through KeyBy sees every element of a key in the same instance, so a
// KeyedState made in its factory holds the whole state of each of its keys.
// It is used from the instance's loop only (no locks).
type KeyedState[K comparable, S any] struct {
	m map[K]*S
}

// NewKeyedState makes an empty KeyedState.
func NewKeyedState[K comparable, S any]() *KeyedState[K, S] {
	return &KeyedState[K, S]{m: make(map[K]*S)}
}

// Get returns key's state, a zero S made on first use.
func (s *KeyedState[K, S]) Get(key K) *S {
	v, ok := s.m[key]
	if !ok {
		v = new(S)
		s.m[key] = v
	}
	return v
}

// Lookup returns key's state and whether it exists.
func (s *KeyedState[K, S]) Lookup(key K) (*S, bool) {
	v, ok := s.m[key]
	return v, ok
}

// Delete forgets key's state.
func (s *KeyedState[K, S]) Delete(key K) { delete(s.m, key) }

// Len is how many keys have state.
func (s *KeyedState[K, S]) Len() int { return len(s.m) }

// All yields every key and its state, in no particular order.
func (s *KeyedState[K, S]) All() iter.Seq2[K, *S] {
	return func(yield func(K, *S) bool) {
		for k, v := range s.m {
			if !yield(k, v) {
				return
			}
		}
	}
}
