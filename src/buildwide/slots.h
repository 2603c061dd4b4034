/* slots: a count of CPUs shared by processes that know nothing of each other, made of files.
 *
 * A directory holds slot.0 .. slot.<n-1>; a slot is taken by holding flock(LOCK_EX) on its
 * file, through a description of the caller's own (so two threads of one process can hold two
 * slots, never the same one). A lock dies with the description, so a process that ends, or is
 * killed, gives back what it held: nothing stale is ever left to clean up.
 *
 * Two users: nvshim (buildwide/threads.c counts the slots held, and holds slots for a compile when
 * the gate cannot be used), and libnvshim-gate.so (preload/gate.c), which takes one slot for
 * each of nvcc's stages. This module uses nothing but libc, so that the gate can contain it.
 *
 * The gate's environment (SLOTS_GATE_ENV) is "<n>:<dir>": the number of slots and their
 * directory, written by slots_gate_format() and read by slots_gate_parse().
 */
#ifndef NVSHIM_SLOTS_H
#define NVSHIM_SLOTS_H

#include <stddef.h>

/* The environment that puts libnvshim-gate.so to work in nvcc, and where LD_PRELOAD as the
 * user had it is kept while the gate is in front of it (unset: LD_PRELOAD was unset). */
#define SLOTS_GATE_ENV "NVSHIM_GATE"
#define SLOTS_GATE_PRELOAD_ENV "NVSHIM_GATE_LD_PRELOAD"
/* Set (to "1") when nvshim gave nvcc --split-compile: the gate then gives each cicc and ptxas
 * stage as many threads as it could take slots (slots_split_command()). A --split-compile of the
 * user's own is left as it is: this is not set then. */
#define SLOTS_SPLIT_ENV "NVSHIM_GATE_SPLIT"

/* Most slots a directory has (one per CPU). */
#define SLOTS_MAX 256

/* Opens <dir>/slot.<i> (created 0600, close-on-exec, no symbolic link followed); -1 on error. */
int slots_open(const char *dir, unsigned i);
/* How many of slot.0 .. slot.<n-1> are held now (none taken). */
unsigned slots_held(const char *dir, unsigned n);
/* Takes one of slot.0 .. slot.<n-1>, trying them from `start` on, waiting while every one is
 * held (polling, 0.5 ms at first, then up to 8 ms between rounds; each round opens, tries and
 * closes the files one at a time, so a waiter keeps no descriptor open). Returns the held
 * description, to be given to slots_give(), or -1 when the slots cannot be used (no such
 * directory, n = 0): the caller then goes on without one. `waited_ms` (may be NULL) gets how long
 * it waited. */
int slots_wait(const char *dir, unsigned n, unsigned start, unsigned *waited_ms);
/* Takes one slot without waiting: the description, or -1 when every one is held or unusable. */
int slots_try(const char *dir, unsigned n, unsigned start);
/* Gives a slot back (fd < 0: nothing); errno is kept. */
void slots_give(int fd);

/* "<n>:<dir>" into buf; returns 0, or -1 when it does not fit. */
int slots_gate_format(char *buf, size_t size, unsigned n, const char *dir);
/* Reads "<n>:<dir>": 0 with *n (1 .. SLOTS_MAX) and dir (an absolute path that fits in `size`),
 * else -1. Tolerates any bytes. */
int slots_gate_parse(const char *text, unsigned *n, char *dir, size_t size);

/* nvcc --split-compile N hands each cicc stage "-split-compile N" and each ptxas stage
 * "-split-compile=N", and records the option in fatbinary's --cmdline and --cicc-cmdline (the
 * options of the driver's JIT for PTX images). The gate rewrites those stage commands (the
 * strings nvcc gives system()):
 *
 * slots_split_wanted(): for a cicc or ptxas stage, the largest N it asks for; 0 for any other
 * command, or one that asks for none.
 * slots_split_command(): the command with each N of a cicc or ptxas stage set to k (at least 1;
 * 1 is one thread, what the stage does without the option), or for a fatbinary stage with the
 * option taken out of its --cmdline and --cicc-cmdline (a --cmdline left empty goes too), so
 * that the object records what it would without it; malloc'ed, or NULL when the command holds
 * nothing to change (or memory ran out): the command then runs as it is. Both take any bytes. */
unsigned slots_split_wanted(const char *command);
char *slots_split_command(const char *command, unsigned k);

#endif
