/* libnvshim-gate.so: nvcc's stages take turns for the CPUs, across every compile nvshim runs.
 *
 * nvcc runs each stage of a compile (the preprocessor for each target, cudafe++, cicc, ptxas,
 * fatbinary, the host compiler) through system(), from one thread per target under --threads.
 * nvshim gives a multi-target compile --threads K for as many targets as the machine could run
 * at once, and puts this library in front of nvcc (LD_PRELOAD) with SLOTS_GATE_ENV naming a
 * directory of slots (buildwide/slots.h): every system() call of nvcc first takes one slot, waiting
 * while all are held (one thread of nvcc looks at a time, the others asleep), and gives it back
 * when the stage ends. So a lone compile runs its targets side by side, a full `make -jN` or
 * ninja build runs no more stages at once than there are slots (one per CPU), and the build's
 * tail, where few compiles are left, gets the CPUs the finished ones gave back: K is a ceiling,
 * the slots decide. With SLOTS_SPLIT_ENV set (nvshim gave nvcc --split-compile S), a cicc or
 * ptxas stage also takes, without waiting, the slots free when it starts, up to S in all, and
 * runs with that many threads; fatbinary's stage runs without the option in its JIT options
 * (slots_split_command(), buildwide/slots.h).
 *
 * The library is inert in every process but one called nvcc (/proc/self/exe): a wrapper script
 * or a compiler cache between nvshim and nvcc passes it on. In nvcc it takes LD_PRELOAD back to
 * what the user had (SLOTS_GATE_PRELOAD_ENV) and removes SLOTS_GATE_ENV before anything runs, so
 * nvcc's stages see the user's environment. It exports system() alone, uses libc and libdl
 * alone, and is built without sanitizers (nvcc is not). A slot it cannot take (the directory
 * gone, no descriptors left) lets the stage run without one: it never fails a compile.
 *
 * With MEMGATE_ENV (buildwide/memgate.h; set for every nvcc that compiles or links, one target
 * or many, SLOTS_GATE_ENV or not) a heavy stage (cicc, ptxas, nvlink, cudafe++, the host
 * compiler) first waits until its expected peak fits the memory budget, then runs through the
 * library's own system() (posix_spawn of /bin/sh -c and wait4(), with glibc's handling of
 * SIGINT, SIGQUIT and SIGCHLD), so that its peak resident memory is measured and learned; a
 * stage killed for memory runs again, alone.
 */
#ifndef NVSHIM_GATE_H
#define NVSHIM_GATE_H

/* The library's file name, in libexec/nvshim beside nvshim-devices. */
#define GATE_LIBRARY "libnvshim-gate.so"

#endif
