/* fault: failure injection, for the tests that prove nvshim fails open.
 *
 * NVSHIM_FAULT=step[,step...] makes each named internal step fail the way it fails when its
 * facts cannot be had (an unreadable file, a tool that does not answer): `config` (every
 * configuration file), `toolkit` (nvcc's version and targets), `devices` (the GPUs), `logfile`
 * (the JSON log), `cache` (the cache directory), `view` (the toolkit view, machine/view.h), and
 * the steps of later passes that call fault_inject() with their own names. Each step then warns
 * once and nvshim carries on as it would without that step; under strict = true the warning is an error. `all` fails every step.
 * Read straight from the environment, not a setting: the configuration itself can be the step
 * that fails.
 */
#ifndef NVSHIM_FAULT_H
#define NVSHIM_FAULT_H

/* 1 if NVSHIM_FAULT names this step (or all), else 0. */
int fault_inject(const char *step);
/* 1 if NVSHIM_FAULT names this step itself; `all` does not count. For the faults that make a
 * layer lose what it built (`lose-compat`, `lose-link`, ...: the outputs guard's tests), which
 * fail a step that must not fail, so nothing but their own name turns them on. */
int fault_named(const char *step);

#endif
