package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

func TestRegistryRegisterLookup(t *testing.T) {
	r := gpu.NewRegistry()
	if len(r.Specs()) != 0 {
		t.Fatalf("new registry has %d specs", len(r.Specs()))
	}
	add, mul := selSpec("add"), selSpec("mul")
	if err := r.Register(add, mul); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]*gpu.KernelSpec{"add": add, "mul": mul} {
		if got, err := r.Lookup(name); err != nil || got != want {
			t.Errorf("Lookup(%q) = %v, %v", name, got, err)
		}
	}
	// Register with nothing is fine and changes nothing.
	if err := r.Register(); err != nil || len(r.Specs()) != 2 {
		t.Errorf("Register() = %v, %d specs", err, len(r.Specs()))
	}
}

func TestRegistryLookupUnknown(t *testing.T) {
	r := gpu.NewRegistry()
	if err := r.Register(selSpec("add")); err != nil {
		t.Fatal(err)
	}
	s, err := r.Lookup("sub")
	if s != nil || !errors.Is(err, gpu.ErrUnknownKernel) {
		t.Fatalf("Lookup(sub) = %v, %v; want ErrUnknownKernel", s, err)
	}
	if !strings.Contains(err.Error(), `"sub"`) {
		t.Errorf("error %q does not name the kernel", err)
	}
}

func TestRegistryDuplicateRejectsWholeCall(t *testing.T) {
	r := gpu.NewRegistry()
	first := selSpec("add")
	if err := r.Register(first); err != nil {
		t.Fatal(err)
	}
	good1, dup := selSpec("scale"), selSpec("add")
	err := r.Register(good1, dup)
	var re *gpu.RegistrationError
	if !errors.Is(err, gpu.ErrRegistration) || !errors.As(err, &re) || re.Kernel != "add" {
		t.Fatalf("Register(scale, add again) = %v; want *RegistrationError for add", err)
	}
	if _, err := r.Lookup("scale"); !errors.Is(err, gpu.ErrUnknownKernel) {
		t.Errorf("scale registered by a rejected call: %v", err)
	}
	if got, _ := r.Lookup("add"); got != first {
		t.Error("rejected call replaced add")
	}
	if n := len(r.Specs()); n != 1 {
		t.Errorf("%d specs after rejected call, want 1", n)
	}

	// A name repeated within one call is rejected too.
	err = r.Register(selSpec("neg"), selSpec("neg"))
	if !errors.Is(err, gpu.ErrRegistration) {
		t.Errorf("Register(neg, neg) = %v", err)
	}
	if _, err := r.Lookup("neg"); err == nil {
		t.Error("neg registered by a rejected call")
	}
}

func TestRegistryRejectsMalformedSpecs(t *testing.T) {
	noop := func(context.Context, []*gpu.UnifiedBuffer, *gpu.UnifiedBuffer, []float64) error { return nil }
	mod := func(name string, f func(*gpu.KernelSpec)) *gpu.KernelSpec {
		s := selSpec(name)
		f(s)
		return s
	}
	cases := []struct {
		name   string
		spec   *gpu.KernelSpec
		reason string
	}{
		{"nil", nil, "nil spec"},
		{"empty name", mod("", func(*gpu.KernelSpec) {}), "empty name"},
		{"no inputs", mod("k", func(s *gpu.KernelSpec) { s.Inputs = 0 }), "at least one input"},
		{"negative inputs", mod("k", func(s *gpu.KernelSpec) { s.Inputs = -1 }), "at least one input"},
		{"no dtypes", mod("k", func(s *gpu.KernelSpec) { s.DTypes = nil }), "no supported dtypes"},
		{"no out shape", mod("k", func(s *gpu.KernelSpec) { s.OutShape = nil }), "no output shape"},
		{"no implementation", mod("k", func(s *gpu.KernelSpec) { s.CPU = nil }), "no implementation"},
		{"empty device map", mod("k", func(s *gpu.KernelSpec) { s.CPU, s.Device = nil, map[string]gpu.KernelFunc{} }), "no implementation"},
		{"negative cost", mod("k", func(s *gpu.KernelSpec) { s.Cost = -1 }), "cost must be a finite number"},
		{"NaN cost", mod("k", func(s *gpu.KernelSpec) { s.Cost = math.NaN() }), "cost must be a finite number"},
		{"invalid dtype", mod("k", func(s *gpu.KernelSpec) { s.DTypes = []gpu.DType{gpu.F32, gpu.DTypeInvalid} }), "invalid dtype"},
		{"out of range dtype", mod("k", func(s *gpu.KernelSpec) { s.DTypes = []gpu.DType{200} }), "invalid dtype"},
		{"empty scalar name", mod("k", func(s *gpu.KernelSpec) { s.Scalars = []gpu.ScalarSpec{{Name: ""}} }), "scalar name"},
		{"repeated scalar", mod("k", func(s *gpu.KernelSpec) { s.Scalars = []gpu.ScalarSpec{{Name: "a"}, {Name: "b"}, {Name: "a"}} }), "scalar name"},
	}
	for _, c := range cases {
		r := gpu.NewRegistry()
		err := r.Register(selSpec("good"), c.spec)
		var re *gpu.RegistrationError
		if !errors.Is(err, gpu.ErrRegistration) || !errors.As(err, &re) {
			t.Errorf("%s: Register = %v; want *RegistrationError", c.name, err)
			continue
		}
		if !strings.Contains(re.Reason, c.reason) {
			t.Errorf("%s: reason %q, want it to mention %q", c.name, re.Reason, c.reason)
		}
		if c.spec != nil && re.Kernel != c.spec.Name {
			t.Errorf("%s: RegistrationError.Kernel = %q, want %q", c.name, re.Kernel, c.spec.Name)
		}
		if !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: message %q lacks the reason", c.name, err)
		}
		if len(r.Specs()) != 0 {
			t.Errorf("%s: rejected call registered %d specs", c.name, len(r.Specs()))
		}
	}

	// Valid variants: device-only implementation, zero cost, distinct scalars.
	deviceOnly := mod("dev", func(s *gpu.KernelSpec) { s.CPU, s.Device = nil, map[string]gpu.KernelFunc{"cuda": noop} })
	scalars := mod("sc", func(s *gpu.KernelSpec) { s.Scalars = []gpu.ScalarSpec{{Name: "a"}, {Name: "b"}} })
	if err := gpu.NewRegistry().Register(deviceOnly, scalars); err != nil {
		t.Errorf("valid specs rejected: %v", err)
	}
}

func TestRegistrationErrorIs(t *testing.T) {
	err := &gpu.RegistrationError{Kernel: "k", Reason: "why"}
	if !errors.Is(err, gpu.ErrRegistration) || errors.Is(err, gpu.ErrArgument) {
		t.Error("RegistrationError matches the wrong sentinels")
	}
	if msg := err.Error(); !strings.Contains(msg, `"k"`) || !strings.Contains(msg, "why") {
		t.Errorf("Error() = %q", msg)
	}
}

func TestRegistrySpecsSorted(t *testing.T) {
	r := gpu.NewRegistry()
	names := []string{"zeta", "add", "mul", "Beta", "a", "conv2d"}
	for _, n := range names {
		if err := r.Register(selSpec(n)); err != nil {
			t.Fatal(err)
		}
	}
	specs := r.Specs()
	want := []string{"Beta", "a", "add", "conv2d", "mul", "zeta"}
	if len(specs) != len(want) {
		t.Fatalf("%d specs, want %d", len(specs), len(want))
	}
	for i, s := range specs {
		if s.Name != want[i] {
			t.Errorf("Specs()[%d] = %q, want %q", i, s.Name, want[i])
		}
	}
	// The result is the caller's: changing it does not change the registry.
	specs[0] = nil
	if r.Specs()[0] == nil {
		t.Error("Specs() returned the registry's own slice")
	}
}

func TestRegistryConcurrentLookupWhileRegistering(t *testing.T) {
	r := gpu.NewRegistry()
	const kernels = 200
	specs := make([]*gpu.KernelSpec, kernels)
	for i := range specs {
		specs[i] = selSpec(fmt.Sprintf("k%03d", i))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(1, 2))
			for {
				select {
				case <-done:
					return
				default:
				}
				i := rng.IntN(kernels)
				if s, err := r.Lookup(specs[i].Name); err == nil && s != specs[i] {
					t.Errorf("Lookup(%s) returned another spec", specs[i].Name)
					return
				} else if err != nil && !errors.Is(err, gpu.ErrUnknownKernel) {
					t.Errorf("Lookup: %v", err)
					return
				}
				all := r.Specs()
				for j := 1; j < len(all); j++ {
					if all[j-1].Name >= all[j].Name {
						t.Errorf("Specs() unsorted during registration")
						return
					}
				}
			}
		})
	}
	for _, s := range specs {
		if err := r.Register(s); err != nil {
			t.Error(err)
		}
	}
	close(done)
	wg.Wait()
	for _, s := range specs {
		if got, err := r.Lookup(s.Name); err != nil || got != s {
			t.Errorf("Lookup(%s) = %v, %v", s.Name, got, err)
		}
	}
}
