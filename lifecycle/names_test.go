package lifecycle

import (
	"slices"
	"testing"
)

func TestStateString(t *testing.T) {
	want := map[State]string{
		Created:     "created",
		Launched:    "launched",
		Active:      "active",
		Deactivated: "deactivated",
		Failed:      "failed",
		Terminated:  "terminated",
		State(42):   "state(42)",
		State(200):  "state(200)",
		State(6):    "state(6)",
	}
	for s, w := range want {
		if got := s.String(); got != w {
			t.Errorf("State(%d).String() = %q, want %q", uint8(s), got, w)
		}
	}
}

func TestEventString(t *testing.T) {
	want := map[Event]string{
		Launch:     "launch",
		Activate:   "activate",
		Deactivate: "deactivate",
		Reactivate: "reactivate",
		Terminate:  "terminate",
		Fault:      "fault",
		Restart:    "restart",
		Event(7):   "event(7)",
		Event(255): "event(255)",
	}
	for e, w := range want {
		if got := e.String(); got != w {
			t.Errorf("Event(%d).String() = %q, want %q", uint8(e), got, w)
		}
	}
}

func TestStatesAndEvents(t *testing.T) {
	if got, want := States(), []State{Created, Launched, Active, Deactivated, Failed, Terminated}; !slices.Equal(got, want) {
		t.Errorf("States() = %v, want %v", got, want)
	}
	if got, want := Events(), []Event{Launch, Activate, Deactivate, Reactivate, Terminate, Fault, Restart}; !slices.Equal(got, want) {
		t.Errorf("Events() = %v, want %v", got, want)
	}
	var zero State
	if zero != Created {
		t.Errorf("zero State = %v, want created", zero)
	}
}

func TestStatePredicates(t *testing.T) {
	tests := []struct {
		s                              State
		canReceive, processing, termin bool
	}{
		{Created, false, false, false},
		{Launched, true, false, false},
		{Active, true, true, false},
		{Deactivated, true, false, false},
		{Failed, false, false, false},
		{Terminated, false, false, true},
	}
	for _, tt := range tests {
		if got := tt.s.CanReceive(); got != tt.canReceive {
			t.Errorf("%v.CanReceive() = %v, want %v", tt.s, got, tt.canReceive)
		}
		if got := tt.s.Processing(); got != tt.processing {
			t.Errorf("%v.Processing() = %v, want %v", tt.s, got, tt.processing)
		}
		if got := tt.s.Terminal(); got != tt.termin {
			t.Errorf("%v.Terminal() = %v, want %v", tt.s, got, tt.termin)
		}
	}
}
