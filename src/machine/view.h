/* view: a toolkit view, the real toolkit with nvshim as its nvcc.
 *
 * Many tools find nvcc as $CUDA_HOME/bin/nvcc or $CUDA_PATH/bin/nvcc, or from a toolkit root
 * they derive (CMake's FindCUDA and FindCUDAToolkit, PyTorch's extension builder, CuPy's nvcc
 * backend). A view is a directory that such a tool takes for the toolkit: a symbolic link to
 * every top-level entry of the real toolkit root but bin/, and a bin/ of links to every entry
 * of the real bin/ but nvcc, which is a link to nvshim's libexec/nvshim/bin/nvcc. Its nvvm/ and
 * bin/ptxas are the real ones; its nvcc is nvshim.
 *
 * CUDA 12's layout where 13.0 moved it: when the real include/ lacks CUDA 12's include/thrust,
 * cub, cuda, nv or nvToolsExt*.h and has their new places (include/cccl/..., include/nvtx3/...),
 * the view's include/ is a directory of links to every real entry plus one link of each old
 * name to its new place (the same files nvcc 13 compiles against), so a host compile, a CMake
 * FindCUDAToolkit before 3.31 and a build that copies include/cuda find them; when lib64/ has no
 * libnvToolsExt.so and include/ has NVTX 3, the view's lib64/ is likewise a directory of links
 * with a libnvToolsExt.so that is a linker script adding nothing (NVTX 3 needs no library), so
 * -lnvToolsExt and CMake's CUDA::nvToolsExt link. Otherwise include/ and lib64/ are links to the
 * real ones.
 *
 * A view lives at <cache_dir>/toolkit-view/<name>-<hash>/<name>/ (name: the real root's last name,
 * which some tools read a version from, as Meson does from cuda-13.0), the hash taken over what
 * identifies the pair: nvshim's nvcc, the real root (resolved) and the cache_file_key() of the
 * real nvcc, of the root and of its bin/ (a directory's modification time changes when an
 * entry is added or removed), so a toolkit that is upgraded, or gains or loses an entry, gets a
 * new view; old views are left for the shells that still name them.
 *
 * It is built under a temporary name in the same directory and renamed into place, so any
 * number of concurrent first uses see no view or a whole one: the first rename wins, the others
 * remove their copy and take the winner's.
 *
 * The loop guard: the view's .nvshim-real-nvcc is a link to the real nvcc. locate_nvcc() finds
 * $CUDA_HOME/bin/nvcc to be nvshim itself and takes that link instead, so nvshim run through a
 * view runs the toolkit the view stands for, never itself.
 */
#ifndef NVSHIM_VIEW_H
#define NVSHIM_VIEW_H

#include <stddef.h>

/* The entry of a view that links to the real nvcc. */
#define VIEW_REAL_NVCC ".nvshim-real-nvcc"

/* The view of the toolkit of real_nvcc (whose resolved path must end in bin/nvcc) with
 * shim_nvcc (nvshim's nvcc) as its nvcc, made under cache_dir when it is not there. Returns 0
 * with *dir (xmalloc'ed), or -1 with *why (xmalloc'ed). */
int view_get(const char *cache_dir, const char *real_nvcc, const char *shim_nvcc, char **dir,
	     char **why);

/* Where view_get() keeps the view of this pair (xmalloc'ed; nothing is made), or NULL. A view
 * at another path is an older one (the toolkit changed since). */
char *view_path(const char *cache_dir, const char *real_nvcc, const char *shim_nvcc);

/* If root is a view: the path of the real nvcc it stands for (root/.nvshim-real-nvcc,
 * xmalloc'ed); NULL otherwise. Whether that is an executable file is for the caller to check. */
char *view_real_nvcc(const char *root);

/* A view's paths out of what a build writes. A build that takes its paths from CUDA_HOME or
 * CUDA_PATH (the view: `nvshim env`) writes them into its outputs: -Xlinker -rpath=<view>/lib64
 * into a RUNPATH, -I<view>/include into debug information and dependency files, -L<view>/lib64
 * into the device code of a linked program. The view lives in nvshim's cache, which may be
 * removed at any time. view_unmap() rewrites every path into a view under cache_dir (as given,
 * and resolved) found in line's arguments, whole or inside one (-I<view>/include,
 * -Wl,-rpath,<view>/lib64, <view>/lib64/libcudart.so, --library-path=<view>/lib64), to the
 * real toolkit root that view stands for (the target of its .nvshim-real-nvcc, less
 * /bin/nvcc), the directory its entries link to. Where the view held CUDA 12's names of what
 * CUDA 13 moved, the moved-files retry (layout.h) finds them again on the real root. Returns
 * how many arguments changed; *what (may be NULL) gets "<view> -> <root>" of the first
 * (xmalloc'ed). Every element is read: pass the arguments, not a program's path.
 * A view that is gone (the cache removed after a build recorded its paths: build.ninja, a
 * Makefile's variables) is mapped too when `w` names the pair it would be made of again: the
 * path view_path() gives for w->real_nvcc and w->shim_nvcc is the one on the line (the same
 * toolkit, unchanged since), so a build configured through a view builds on without it. */
struct argv;
struct view_unmap_with {
	const char *cache_dir;
	const char *shim_nvcc; /* nvshim's libexec/nvshim/bin/nvcc */
	const char *real_nvcc; /* the nvcc nvshim runs */
};
size_t view_unmap(const char *cache_dir, const struct view_unmap_with *w, struct argv *line, char **what);

#endif
