package stream

import "fmt"

// Side is a stage's side output: a second Outlet, of its own element type,
// that the stage's functions emit to with Emit. Window's late elements are
// one. Its watermark is the stage's input watermark; it ends with the stage.
type Side[T any] struct {
	n     *node
	stage string
	ems   []*Emitter[T]
}

// NewSide declares a side output of stage s. Declare it before Start.
func NewSide[T, In, Out any](s *Stage[In, Out]) *Side[T] {
	g := s.n.g
	sd := &Side[T]{n: s.n, stage: s.n.name}
	for _, in := range s.insts {
		em := newEmitter[T](g, in.stats)
		em.fire = in.fireTimer
		sd.ems = append(sd.ems, em)
	}
	s.sides = append(s.sides, func(i int) output { return sd.ems[i] })
	return sd
}

// Emit sends v on the side output from the stage instance c belongs to. c
// must be the Context its own stage's function was given.
func (sd *Side[T]) Emit(c *Context, v T) {
	if c == nil || c.stage != sd.stage || c.instance >= len(sd.ems) {
		panic(fmt.Sprintf("stream: side output of %q used from another stage's context", sd.stage))
	}
	sd.ems[c.instance].Emit(v)
}

func (sd *Side[T]) outNode() *node          { return sd.n }
func (sd *Side[T]) emitters() []*Emitter[T] { return sd.ems }
