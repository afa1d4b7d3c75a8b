package lifecycle

import (
	"errors"
	"slices"
	"testing"
)

// invalid marks a row whose pair must be refused.
const invalid = State(255)

func TestTransitionTable(t *testing.T) {
	tests := []struct {
		from  State
		event Event
		want  State
	}{
		{Created, Launch, Launched},
		{Created, Activate, invalid},
		{Created, Deactivate, invalid},
		{Created, Reactivate, invalid},
		{Created, Terminate, Terminated},
		{Created, Fault, invalid},
		{Created, Restart, invalid},

		{Launched, Launch, invalid},
		{Launched, Activate, Active},
		{Launched, Deactivate, invalid},
		{Launched, Reactivate, invalid},
		{Launched, Terminate, Terminated},
		{Launched, Fault, invalid},
		{Launched, Restart, invalid},

		{Active, Launch, invalid},
		{Active, Activate, invalid},
		{Active, Deactivate, Deactivated},
		{Active, Reactivate, invalid},
		{Active, Terminate, Terminated},
		{Active, Fault, Failed},
		{Active, Restart, invalid},

		{Deactivated, Launch, invalid},
		{Deactivated, Activate, invalid},
		{Deactivated, Deactivate, invalid},
		{Deactivated, Reactivate, Active},
		{Deactivated, Terminate, Terminated},
		{Deactivated, Fault, invalid},
		{Deactivated, Restart, invalid},

		{Failed, Launch, invalid},
		{Failed, Activate, invalid},
		{Failed, Deactivate, invalid},
		{Failed, Reactivate, invalid},
		{Failed, Terminate, Terminated},
		{Failed, Fault, invalid},
		{Failed, Restart, Active},

		{Terminated, Launch, invalid},
		{Terminated, Activate, invalid},
		{Terminated, Deactivate, invalid},
		{Terminated, Reactivate, invalid},
		{Terminated, Terminate, invalid},
		{Terminated, Fault, invalid},
		{Terminated, Restart, invalid},
	}
	if want := len(States()) * len(Events()); len(tests) != want {
		t.Fatalf("table has %d rows, want %d", len(tests), want)
	}
	seen := map[[2]uint8]bool{}
	for _, tt := range tests {
		key := [2]uint8{uint8(tt.from), uint8(tt.event)}
		if seen[key] {
			t.Fatalf("duplicate row %v/%v", tt.from, tt.event)
		}
		seen[key] = true
		t.Run(tt.from.String()+"/"+tt.event.String(), func(t *testing.T) {
			got, err := Transition(tt.from, tt.event)
			if tt.want != invalid {
				if err != nil {
					t.Fatalf("Transition(%v, %v) error = %v", tt.from, tt.event, err)
				}
				if got != tt.want {
					t.Fatalf("Transition(%v, %v) = %v, want %v", tt.from, tt.event, got, tt.want)
				}
				return
			}
			if got != tt.from {
				t.Errorf("invalid Transition(%v, %v) state = %v, want unchanged", tt.from, tt.event, got)
			}
			var ite ErrInvalidTransition
			if !errors.As(err, &ite) {
				t.Fatalf("Transition(%v, %v) error = %v, want ErrInvalidTransition", tt.from, tt.event, err)
			}
			if ite.From != tt.from || ite.Event != tt.event {
				t.Errorf("error = %+v, want From=%v Event=%v", ite, tt.from, tt.event)
			}
			if !errors.Is(err, ErrTransition) {
				t.Errorf("errors.Is(%v, ErrTransition) = false", err)
			}
		})
	}
}

func TestTransitionUnknownValues(t *testing.T) {
	for _, tc := range []struct {
		s State
		e Event
	}{{State(99), Launch}, {Created, Event(99)}} {
		got, err := Transition(tc.s, tc.e)
		if !errors.Is(err, ErrTransition) || got != tc.s {
			t.Errorf("Transition(%v, %v) = %v, %v; want %v, ErrTransition", tc.s, tc.e, got, err, tc.s)
		}
	}
}

// reachable returns the states reachable from s by any sequence of events,
// s included, in State order.
func reachable(s State) []State {
	seen := map[State]bool{s: true}
	queue := []State{s}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, e := range Events() {
			if n, err := Transition(cur, e); err == nil && !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	var out []State
	for _, st := range States() {
		if seen[st] {
			out = append(out, st)
		}
	}
	return out
}

func TestReachable(t *testing.T) {
	cycle := []State{Active, Deactivated, Failed, Terminated}
	want := map[State][]State{
		Created:     States(),
		Launched:    {Launched, Active, Deactivated, Failed, Terminated},
		Active:      cycle,
		Deactivated: cycle,
		Failed:      cycle,
		Terminated:  {Terminated},
	}
	for _, s := range States() {
		if got := reachable(s); !slices.Equal(got, want[s]) {
			t.Errorf("reachable(%v) = %v, want %v", s, got, want[s])
		}
	}
}

func TestTransitionDoesNotAllocate(t *testing.T) {
	var sink State
	allocs := testing.AllocsPerRun(1000, func() {
		s, err := Transition(Active, Deactivate)
		if err != nil {
			panic(err)
		}
		sink = s
	})
	if allocs != 0 {
		t.Fatalf("Transition allocates %v times per call, want 0", allocs)
	}
	_ = sink
}

func TestErrorMessage(t *testing.T) {
	_, err := Transition(Terminated, Activate)
	const want = "lifecycle: invalid transition: cannot activate a kernel that is terminated"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
	if errors.Is(errors.New("other"), ErrTransition) {
		t.Fatal("unrelated error matches ErrTransition")
	}
	if (ErrInvalidTransition{}).Is(errors.New("lifecycle: invalid transition")) {
		t.Fatal("Is matches an error other than the sentinel")
	}
}

func BenchmarkTransition(b *testing.B) {
	for b.Loop() {
		_, _ = Transition(Active, Fault)
	}
}
