/* commands: what the nvshim executable does, by the name it runs under and its first word.
 *
 *   nvcc ARGS... (any name but nvshim)   act as nvcc
 *   nvshim NVCC-ARGS...                  act as nvcc (also `nvshim nvcc ARGS...`)
 *   nvshim help [--man] | version | config | explain ARGS... | doctor | env | fingerprint
 *   nvcc --nvshim-fingerprint            `nvshim fingerprint` under any name (for ccache)
 *   cc, c++, gcc, g++, clang, clang++ ARGS...  (by name, or `nvshim cc ARGS...`)
 *                                        act as the host compiler (CC/CXX mode)
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

/* CC/CXX mode as `name` (cc, c++, gcc, g++, clang, clang++) on args[0..n): CUDA inputs are
 * compiled by nvcc with gcc's options translated (module hostcc), everything else runs the
 * real compiler (host_cc / host_cxx, else `name` on PATH past nvshim) unchanged, and links
 * get the link pass. Run by a tool nvshim started (NVSHIM_DEPTH set), it only runs the real
 * compiler. */
int commands_cc(const char *name, int n, char **args);
/* 1 for the names CC mode answers to. */
int commands_is_cc_name(const char *name);

#endif
