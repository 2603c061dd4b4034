/* commands: what the nvshim executable does, by the name it runs under and its first word.
 *
 *   nvcc ARGS... (any name but nvshim)   act as nvcc
 *   nvshim NVCC-ARGS...                  act as nvcc (also `nvshim nvcc ARGS...`)
 *   nvshim help | version | config | explain ARGS... | doctor
 *   nvshim run [--nvshim-<setting>=<value>...] -- CMD ARGS...   CMD with libnvshim-preload.so
 *
 * nvshim's own commands are bare words, so they never collide with nvcc's options; a file
 * named like a command can be compiled with `nvshim nvcc FILE`.
 */
#ifndef NVSHIM_COMMANDS_H
#define NVSHIM_COMMANDS_H

/* The whole program: returns the exit status. */
int commands_main(int argc, char **argv);

/* nvcc mode on args[0..n). */
int commands_nvcc(int n, char **args);

#endif
