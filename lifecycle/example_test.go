package lifecycle_test

import (
	"errors"
	"fmt"

	"github.com/ringactor/ringactor/lifecycle"
)

func Example() {
	s := lifecycle.Created
	for _, e := range []lifecycle.Event{
		lifecycle.Launch, lifecycle.Activate, lifecycle.Fault,
		lifecycle.Restart, lifecycle.Deactivate, lifecycle.Terminate,
	} {
		next, err := lifecycle.Transition(s, e)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s --%s--> %s (processing=%t)\n", s, e, next, next.Processing())
		s = next
	}

	_, err := lifecycle.Transition(s, lifecycle.Activate)
	fmt.Println(err)
	if ite, ok := errors.AsType[lifecycle.ErrInvalidTransition](err); ok {
		fmt.Println(errors.Is(err, lifecycle.ErrTransition), ite.From)
	}
	// Output:
	// created --launch--> launched (processing=false)
	// launched --activate--> active (processing=true)
	// active --fault--> failed (processing=false)
	// failed --restart--> active (processing=true)
	// active --deactivate--> deactivated (processing=false)
	// deactivated --terminate--> terminated (processing=false)
	// lifecycle: invalid transition: cannot activate a kernel that is terminated
	// true terminated
}
