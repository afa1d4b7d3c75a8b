// Keeping Go's signal handling intact across calls into NVIDIA's libraries.
//
// Go installs its signal handlers with SA_ONSTACK|SA_SIGINFO and aborts
// ("non-Go code set up signal handler without SA_ONSTACK flag") when a
// signal arrives through a handler installed without SA_ONSTACK. NVRTC 11
// (its LLVM front end) swaps in handlers of its own for SIGINT and SIGTERM
// during nvrtcCompileProgram and puts the previous handler back with
// signal(), which drops SA_ONSTACK and SA_SIGINFO; libcuda is reported to
// install handlers without SA_ONSTACK in cuInit. rc_sig_save snapshots
// every signal's action before such a call and rc_sig_repair mends them
// after it (see there).

#ifndef RINGACTOR_SIGNALS_CGO_H
#define RINGACTOR_SIGNALS_CGO_H

#include <signal.h>

#define RC_NSIG 65

typedef struct {
	struct sigaction sa[RC_NSIG];
} rc_sigactions;

// rc_sig_save records every signal's action in s.
void rc_sig_save(rc_sigactions *s);

// rc_sig_repair mends what a foreign library changed since rc_sig_save(s):
// a signal whose handler is the one saved but whose flags or mask changed
// (a handler put back with signal()) gets the saved action again; a
// handler the library installed without SA_ONSTACK gets SA_ONSTACK added.
// It returns how many actions it changed.
int rc_sig_repair(const rc_sigactions *s);

// rc_sig_lock and rc_sig_unlock serialise the calls wrapped in save and
// repair: two at once would save each other's temporary handlers.
void rc_sig_lock(void);
void rc_sig_unlock(void);

#endif
