package cuda

import (
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// FuzzHardwareQueues: any CUDA_DEVICE_MAX_CONNECTIONS value gives a number
// of hardware queues from 1 to MaxHardwareQueues: a decimal integer (with
// an optional sign, spaces around it, any number of digits) clamped to that
// range, anything else DefaultHardwareQueues; and the value formatted back
// reads the same.
func FuzzHardwareQueues(f *testing.F) {
	for _, s := range []string{"", "8", "1", "32", "33", "0", "-4", " 16 ", "+5", "four", "4.5", "0x10", "1_0", "08",
		"99999999999999999999", "-99999999999999999999", "9223372036854775808", "\t12\n", "\u00a07\u2003", "１６"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, env string) {
		got := HardwareQueues(env)
		if got < 1 || got > MaxHardwareQueues {
			t.Fatalf("HardwareQueues(%q) = %d, outside 1..%d", env, got, MaxHardwareQueues)
		}
		want := DefaultHardwareQueues
		s := strings.TrimSpace(env)
		if n, ok := new(big.Int).SetString(s, 10); ok && s != "" && !strings.ContainsAny(s[1:], "+-_") {
			switch {
			case n.Cmp(big.NewInt(1)) < 0:
				want = 1
			case n.Cmp(big.NewInt(MaxHardwareQueues)) > 0:
				want = MaxHardwareQueues
			default:
				want = int(n.Int64())
			}
		}
		if got != want {
			t.Fatalf("HardwareQueues(%q) = %d, want %d", env, got, want)
		}
		if again := HardwareQueues(strconv.Itoa(got)); again != got {
			t.Fatalf("HardwareQueues(%q) = %d, but HardwareQueues(%q) = %d", env, got, strconv.Itoa(got), again)
		}
	})
}
