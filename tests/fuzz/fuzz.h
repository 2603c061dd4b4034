/* Fuzz targets: each file defines LLVMFuzzerTestOneInput() for one parser of outside input.
 *
 * Built two ways: with clang and -fsanitize=fuzzer (tests/run-all.sh's fuzz stage, which
 * mutates for a bounded time), and with any compiler against replay.c, a main() that feeds
 * every file of the corpus to the target once: the corpus is then a regression test that runs
 * in every build, sanitizers included.
 */
#ifndef NVSHIM_FUZZ_H
#define NVSHIM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The input as a NUL-terminated string (xmalloc'ed). */
char *fuzz_string(const uint8_t *data, size_t size);

/* The input as arguments separated by NUL bytes, pushed onto out. */
struct argv;
void fuzz_args(const uint8_t *data, size_t size, struct argv *out);

#endif
