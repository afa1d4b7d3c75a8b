package sensor

import "sync"

// pools recycle the reader's chunk buffers (parse returns them) and the
// row batches (window returns them), so that a run allocates about as many
// of each as its rings hold, not one per message.
type pools struct {
	size    int // a chunk buffer's capacity
	chunks  sync.Pool
	batches sync.Pool
}

func newPools(chunkBytes int) *pools {
	return &pools{size: chunkBytes}
}

// chunk returns an empty buffer of at least the chunk size.
func (p *pools) chunk() *[]byte {
	if b, ok := p.chunks.Get().(*[]byte); ok {
		*b = (*b)[:0]
		return b
	}
	b := make([]byte, 0, p.size)
	return &b
}

// putChunk recycles a chunk buffer.
func (p *pools) putChunk(b *[]byte) {
	if b != nil {
		p.chunks.Put(b)
	}
}

// batch returns an empty batch.
func (p *pools) batch() *Batch {
	if b, ok := p.batches.Get().(*Batch); ok {
		return b
	}
	return &Batch{Rows: make([]Row, 0, p.size/24)}
}

// putBatch empties b and recycles it.
func (p *pools) putBatch(b *Batch) {
	*b = Batch{Rows: b.Rows[:0]}
	p.batches.Put(b)
}
