//go:build linux && cgo

// See signals_cgo.h.

#include <pthread.h>
#include <string.h>

#include "signals_cgo.h"

static pthread_mutex_t rc_sig_mu = PTHREAD_MUTEX_INITIALIZER;

void rc_sig_lock(void) { pthread_mutex_lock(&rc_sig_mu); }
void rc_sig_unlock(void) { pthread_mutex_unlock(&rc_sig_mu); }

void rc_sig_save(rc_sigactions *s) {
	memset(s, 0, sizeof(*s));
	for (int sig = 1; sig < RC_NSIG; sig++) {
		sigaction(sig, NULL, &s->sa[sig]);
	}
}

// rc_handler is an action's handler, whichever member holds it.
static void *rc_handler(const struct sigaction *a) {
	if (a->sa_flags & SA_SIGINFO) {
		return (void *)a->sa_sigaction;
	}
	return (void *)a->sa_handler;
}

int rc_sig_repair(const rc_sigactions *s) {
	int changed = 0;
	for (int sig = 1; sig < RC_NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP) {
			continue;
		}
		struct sigaction cur;
		if (sigaction(sig, NULL, &cur) != 0) {
			continue;
		}
		const struct sigaction *old = &s->sa[sig];
		void *h = rc_handler(&cur);
		if (h == rc_handler(old)) {
			if (cur.sa_flags != old->sa_flags || memcmp(&cur.sa_mask, &old->sa_mask, sizeof(cur.sa_mask)) != 0) {
				sigaction(sig, old, NULL);
				changed++;
			}
			continue;
		}
		if (h != (void *)SIG_DFL && h != (void *)SIG_IGN && !(cur.sa_flags & SA_ONSTACK)) {
			cur.sa_flags |= SA_ONSTACK;
			sigaction(sig, &cur, NULL);
			changed++;
		}
	}
	return changed;
}
