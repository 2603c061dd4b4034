/* migrate_build: `nvshim migrate` on build files, the lasting fix for CUDA 13.0's moved files
 * (upgrade/layout.h) as a rewrite of a CMakeLists.txt, a *.cmake file, a Makefile or a setup.py.
 * Each edit builds on 13.0 and on 12.x alike (a directory that 12.x lacks is skipped by the
 * compiler and by CMake):
 *   CMake     target_link_libraries(T ... CUDA::cudart | CUDA::cudart_static | CUDA::toolkit ...)
 *               gets, on the line after the command,
 *               target_include_directories(T SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS}/cccl)
 *               (what nvcc 13 adds itself and a host compiler does not);
 *             CUDA::nvToolsExt becomes CUDA::nvtx3 (CMake 3.25), with
 *               target_include_directories(T SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS}/nvtx3)
 *               for the sources' #include <nvToolsExt.h>;
 *             ${CUDAToolkit_BIN_DIR}/../include/{cuda,thrust,cub,nv} (a copy, an include path)
 *               reads ${nvshim_cccl_include}/..., set before the command to include/cccl where
 *               it exists, else include/;
 *   Makefile  -I<X>/include (X: $(CUDA_HOME), $(CUDA_PATH), ${...}, /usr/local/cuda, ...) gets
 *               -I<X>/include/cccl after it, and -I<X>/include/nvtx3 before it where the file
 *               links -lnvToolsExt, which is taken out (before: on 12.x include/nvToolsExt.h is
 *               NVTX 2's, which needs the library);
 *   setup.py  os.path.join(X, "include") gets os.path.join(X, "include", "cccl") after it (and
 *               "nvtx3" before it where the file links nvToolsExt); "nvToolsExt" leaves a
 *               libraries list.
 * In all three, C++ dialects older than C++17, which CCCL 3 refuses: -std=c++14 (c++11, gnu++14,
 *   --std=...), and in CMake CMAKE_CUDA_STANDARD / CMAKE_CXX_STANDARD / CUDA_STANDARD / CXX_STANDARD
 *   14 (11, 98, ...) and cxx_std_14 / cuda_std_14, become 17.
 * Nothing is added twice (a file that already names include/cccl keeps its lines). The result is
 * a struct migrate_result (upgrade/migrate.h): its changes, its "fixed" lines, its text.
 */
#ifndef NVSHIM_MIGRATE_BUILD_H
#define NVSHIM_MIGRATE_BUILD_H

#include <stddef.h>

#include "upgrade/migrate.h"

enum migrate_build_kind { MIGRATE_SOURCE = 0, MIGRATE_CMAKE, MIGRATE_MAKE, MIGRATE_SETUP };

/* What a file is by its name: CMakeLists.txt and *.cmake, Makefile, makefile, GNUmakefile and
 * *.mk, setup.py; MIGRATE_SOURCE for anything else. */
enum migrate_build_kind migrate_build_kind(const char *path);

/* Migrates `len` bytes of a build file's `text` (need not end in NUL). Never fails. */
void migrate_build_text(const char *text, size_t len, enum migrate_build_kind kind, struct migrate_result *out);

#endif
