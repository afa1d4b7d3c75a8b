package gpu

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
)

// Registry holds compute kernels by name. Lookups are lock-free (an
// immutable map swapped on registration); registrations are serialised.
type Registry struct {
	mu    sync.Mutex
	specs atomic.Pointer[map[string]*KernelSpec]
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	r := &Registry{}
	m := map[string]*KernelSpec{}
	r.specs.Store(&m)
	return r
}

// Register adds specs; a malformed spec or a name already taken rejects the
// whole call and changes nothing.
func (r *Registry) Register(specs ...*KernelSpec) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := *r.specs.Load()
	next := make(map[string]*KernelSpec, len(old)+len(specs))
	for k, v := range old {
		next[k] = v
	}
	for _, s := range specs {
		if err := s.Validate(); err != nil {
			return err
		}
		if _, dup := next[s.Name]; dup {
			return &RegistrationError{Kernel: s.Name, Reason: "a kernel of that name is already registered"}
		}
		next[s.Name] = s
	}
	r.specs.Store(&next)
	return nil
}

// Lookup returns the kernel of that name.
func (r *Registry) Lookup(name string) (*KernelSpec, error) {
	if s, ok := (*r.specs.Load())[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownKernel, name)
}

// Specs returns every kernel, sorted by name.
func (r *Registry) Specs() []*KernelSpec {
	m := *r.specs.Load()
	out := make([]*KernelSpec, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
