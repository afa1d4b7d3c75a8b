package demomsg

// The message types of `ringactor demo`'s in-process kernels (vector_add
// takes AddRequest and replies AddReply, as the add kind does).

// Value is running_sum's message: one number to add.
type Value struct{ V float64 }

// Sum is running_sum's reply: the total so far and how many values made it.
type Sum struct {
	Total float64
	Count int
}

// Vector is the message of both stages of the scale → square_sum chain, and
// scale's reply.
type Vector struct{ X []float64 }

// Scalar is square_sum's reply: the sum of the squares of a Vector.
type Scalar struct{ V float64 }

// Message type names of the demo command's kernels (messages.Register).
const (
	ValueName  = "ringactor.demo.Value"
	SumName    = "ringactor.demo.Sum"
	VectorName = "ringactor.demo.Vector"
	ScalarName = "ringactor.demo.Scalar"
)
