/*
 * interrupt.c - Ctrl-C (SIGINT) in the onnxrun tool: the first one cancels the run in
 * progress through onnxrun_session_cancel (async-signal-safe), so the tool can stop
 * cleanly, report what it was doing and exit with CLI_EXIT_INTERRUPTED; one before or
 * between runs makes the tool stop before its next run. A second Ctrl-C ends the process at
 * once, as without the handler. The library's worker threads block signals, so the
 * handler runs on the tool's own (single) thread.
 */
#include <signal.h>
#include <stddef.h>

#include "cli.h"

static volatile sig_atomic_t interrupted;
static struct onnxrun_session *volatile watched;

static void on_sigint(int sig)
{
	struct onnxrun_session *s = watched;
	if (interrupted) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	interrupted = 1;
	onnxrun_session_cancel(s); /* NULL does nothing */
}

void cli_interrupt_install(void)
{
	onnxrun__os_on_interrupt(on_sigint);
}

void cli_interrupt_watch(struct onnxrun_session *session)
{
	watched = session;
	if (session != NULL && interrupted)
		onnxrun_session_cancel(session); /* pressed while no session was watched */
}

int cli_interrupted(void)
{
	return interrupted != 0;
}
