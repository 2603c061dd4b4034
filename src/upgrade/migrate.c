#include "upgrade/migrate.h"
#include "base/strbuf.h"
#include "upgrade/migrate_helpers.h"
#include "upgrade/migrate_scan.h"

#include <ctype.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

/* ---- the recipes ---- */

enum guard { G_NONE, G_CUDART, G_CUDA, G_CCCL, G_COUNT };

static const char *const guard_cond[G_COUNT] = { NULL, "CUDART_VERSION >= 13000", "CUDA_VERSION >= 13000",
						 "CCCL_MAJOR_VERSION >= 3" };

enum kind {
	K_RENAME,  /* the name becomes `to` */
	K_FIELD,   /* OBJ.FIELD / OBJ->FIELD read: nvshim_migrate_attr(`to`, DEVICE) */
	K_ARGS,    /* a call with `argc` arguments gets `to` inserted before argument `pos` (or, with
		      `to` NULL, argument `pos` dropped) */
	K_MACRO,   /* NAME(a, b) becomes `to` with $1 and $2 replaced by the arguments */
	K_BASE,    /* a base class removed, the aliases its arguments named declared in the class */
	K_VALUE,   /* the whole call becomes `to` */
	K_LOCATION, /* argument `pos` (a device number) becomes a memory location; with argc == 4 and
		      `to` "0", flags are inserted before the stream (prefetch) */
	K_TARGS,   /* NAME<a1, a2, ...> with `argc` template arguments becomes `to` with $1 $2 ...
		      replaced (with argc + 1, an offset type last: `to_offset`; argc 0: "NAME<>"
		      too); the header targs_header() names is added */
	K_IDENTITY /* thrust::identity<T> (or thrust::identity followed by '(' or '{') becomes
		      nvshim_migrate_identity<T>, a class template inserted once: CCCL 2.8's */
};

struct recipe {
	const char *name;
	enum kind kind;
	const char *to;
	enum guard guard;
	int argc, pos;
	const char *form;
	const char *to_offset; /* K_TARGS: the form with an offset type (argc + 1 arguments), or NULL */
};

#define FIELD(f, attr)                                                                                 \
	{ "cudaDeviceProp::" f, K_FIELD, attr, G_NONE, 0, 0,                                           \
	  "OBJ." f " -> nvshim_migrate_attr(" attr ", DEVICE), DEVICE the one passed to "              \
	  "cudaGetDeviceProperties(&OBJ, DEVICE); a static helper calling cudaDeviceGetAttribute is "  \
	  "added after the leading #includes; where no such call is in sight and OBJ is declared a "    \
	  "cudaDeviceProp, nvshim_migrate_prop_attr(&(OBJ), " attr "), the device whose PCI ids are "  \
	  "the struct's, guarded by #if CUDART_VERSION >= 13000", NULL }
#define RENAME(a, b) { a, K_RENAME, b, G_NONE, 0, 0, a " -> " b, NULL }
#define GRENAME(a, b, g, c) { a, K_RENAME, b, g, 0, 0, a " -> " b ", guarded by #if " c, NULL }
#define INSERT_D(f, n, p, ex) { f, K_ARGS, "NULL", G_CUDA, n, p, ex ", guarded by #if CUDA_VERSION >= 13000", NULL }
#define INSERT_R(f, n, p, ex) { f, K_ARGS, "NULL", G_CUDART, n, p, ex ", guarded by #if CUDART_VERSION >= 13000", NULL }
#define CCCL(a, b) { a, K_RENAME, b, G_CCCL, 0, 0, a " -> " b ", guarded by #if CCCL_MAJOR_VERSION >= 3", NULL }
#define MACRO(a, b) { a, K_MACRO, b, G_NONE, 2, 0, a "(x, y) -> " b " (CCCL 2.8's expansion)", NULL }

static const struct recipe recipes[] = {
	FIELD("clockRate", "cudaDevAttrClockRate"),
	FIELD("memoryClockRate", "cudaDevAttrMemoryClockRate"),
	FIELD("computeMode", "cudaDevAttrComputeMode"),
	FIELD("deviceOverlap", "cudaDevAttrGpuOverlap"),
	FIELD("kernelExecTimeoutEnabled", "cudaDevAttrKernelExecTimeout"),
	FIELD("singleToDoublePrecisionPerfRatio", "cudaDevAttrSingleToDoublePrecisionPerfRatio"),
	RENAME("cudaThreadSynchronize", "cudaDeviceSynchronize"),
	RENAME("cudaThreadExit", "cudaDeviceReset"),
	RENAME("cudaThreadGetCacheConfig", "cudaDeviceGetCacheConfig"),
	RENAME("cudaThreadSetCacheConfig", "cudaDeviceSetCacheConfig"),
	RENAME("cudaThreadGetLimit", "cudaDeviceGetLimit"),
	RENAME("cudaThreadSetLimit", "cudaDeviceSetLimit"),
	RENAME("cudaGetDeviceProperties_v2", "cudaGetDeviceProperties"),
	RENAME("cudaDevAttrMaxTimelineSemaphoreInteropSupported", "cudaDevAttrTimelineSemaphoreInteropSupported"),
	{ "cudaSetDoubleForDevice", K_VALUE, "cudaSuccess", G_NONE, 0, 0,
	  "cudaSetDoubleForDevice(&d) -> cudaSuccess (it did nothing)", NULL },
	{ "cudaSetDoubleForHost", K_VALUE, "cudaSuccess", G_NONE, 0, 0,
	  "cudaSetDoubleForHost(&d) -> cudaSuccess (it did nothing)", NULL },
	GRENAME("CU_TARGET_COMPUTE_101", "CU_TARGET_COMPUTE_110", G_CUDA, "CUDA_VERSION >= 13000"),
	GRENAME("CU_TARGET_COMPUTE_101A", "CU_TARGET_COMPUTE_110A", G_CUDA, "CUDA_VERSION >= 13000"),
	GRENAME("CU_TARGET_COMPUTE_101F", "CU_TARGET_COMPUTE_110F", G_CUDA, "CUDA_VERSION >= 13000"),
	{ "cuGetProcAddress", K_ARGS, "NULL", G_NONE, 4, 4,
	  "cuGetProcAddress(sym, &fn, version, flags) -> cuGetProcAddress(sym, &fn, version, flags, NULL) (CUDA 12.0's form)", NULL },
	INSERT_D("cuCtxCreate", 3, 1, "cuCtxCreate(&ctx, flags, dev) -> cuCtxCreate(&ctx, NULL, flags, dev)"),
	INSERT_R("cudaGraphAddDependencies", 4, 3, "cudaGraphAddDependencies(g, from, to, n) -> cudaGraphAddDependencies(g, from, to, NULL, n)"),
	INSERT_R("cudaGraphRemoveDependencies", 4, 3, "cudaGraphRemoveDependencies(g, from, to, n) -> cudaGraphRemoveDependencies(g, from, to, NULL, n)"),
	INSERT_R("cudaGraphGetEdges", 4, 3, "cudaGraphGetEdges(g, from, to, &n) -> cudaGraphGetEdges(g, from, to, NULL, &n)"),
	INSERT_R("cudaGraphNodeGetDependencies", 3, 2, "cudaGraphNodeGetDependencies(node, deps, &n) -> cudaGraphNodeGetDependencies(node, deps, NULL, &n)"),
	INSERT_R("cudaGraphNodeGetDependentNodes", 3, 2, "cudaGraphNodeGetDependentNodes(node, deps, &n) -> cudaGraphNodeGetDependentNodes(node, deps, NULL, &n)"),
	INSERT_R("cudaGraphAddNode", 5, 3, "cudaGraphAddNode(&node, g, deps, n, &p) -> cudaGraphAddNode(&node, g, deps, NULL, n, &p)"),
	INSERT_R("cudaStreamGetCaptureInfo", 6, 5, "cudaStreamGetCaptureInfo(s, &st, &id, &g, &deps, &n) -> cudaStreamGetCaptureInfo(s, &st, &id, &g, &deps, NULL, &n)"),
	INSERT_R("cudaStreamUpdateCaptureDependencies", 4, 2, "cudaStreamUpdateCaptureDependencies(s, deps, n, flags) -> cudaStreamUpdateCaptureDependencies(s, deps, NULL, n, flags)"),
	INSERT_D("cuGraphAddDependencies", 4, 3, "cuGraphAddDependencies(g, from, to, n) -> cuGraphAddDependencies(g, from, to, NULL, n)"),
	INSERT_D("cuGraphRemoveDependencies", 4, 3, "cuGraphRemoveDependencies(g, from, to, n) -> cuGraphRemoveDependencies(g, from, to, NULL, n)"),
	INSERT_D("cuGraphGetEdges", 4, 3, "cuGraphGetEdges(g, from, to, &n) -> cuGraphGetEdges(g, from, to, NULL, &n)"),
	INSERT_D("cuGraphNodeGetDependencies", 3, 2, "cuGraphNodeGetDependencies(node, deps, &n) -> cuGraphNodeGetDependencies(node, deps, NULL, &n)"),
	INSERT_D("cuGraphNodeGetDependentNodes", 3, 2, "cuGraphNodeGetDependentNodes(node, deps, &n) -> cuGraphNodeGetDependentNodes(node, deps, NULL, &n)"),
	INSERT_D("cuGraphAddNode", 5, 3, "cuGraphAddNode(&node, g, deps, n, &p) -> cuGraphAddNode(&node, g, deps, NULL, n, &p)"),
	INSERT_D("cuStreamGetCaptureInfo", 6, 5, "cuStreamGetCaptureInfo(s, &st, &id, &g, &deps, &n) -> cuStreamGetCaptureInfo(s, &st, &id, &g, &deps, NULL, &n)"),
	INSERT_D("cuStreamUpdateCaptureDependencies", 4, 2, "cuStreamUpdateCaptureDependencies(s, deps, n, flags) -> cuStreamUpdateCaptureDependencies(s, deps, NULL, n, flags)"),
	{ "cudaMemcpyBatchAsync", K_ARGS, NULL, G_CUDART, 9, 7,
	  "cudaMemcpyBatchAsync(..., numAttrs, &failIdx, s) -> cudaMemcpyBatchAsync(..., numAttrs, s), guarded by #if CUDART_VERSION >= 13000", NULL },
	{ "cudaMemcpy3DBatchAsync", K_ARGS, NULL, G_CUDART, 5, 2,
	  "cudaMemcpy3DBatchAsync(n, ops, &failIdx, flags, s) -> cudaMemcpy3DBatchAsync(n, ops, flags, s), guarded by #if CUDART_VERSION >= 13000", NULL },
	{ "cuMemcpyBatchAsync", K_ARGS, NULL, G_CUDA, 9, 7,
	  "cuMemcpyBatchAsync(..., numAttrs, &failIdx, s) -> cuMemcpyBatchAsync(..., numAttrs, s), guarded by #if CUDA_VERSION >= 13000", NULL },
	{ "cuMemcpy3DBatchAsync", K_ARGS, NULL, G_CUDA, 5, 2,
	  "cuMemcpy3DBatchAsync(n, ops, &failIdx, flags, s) -> cuMemcpy3DBatchAsync(n, ops, flags, s), guarded by #if CUDA_VERSION >= 13000", NULL },
	{ "cudaMemAdvise", K_LOCATION, NULL, G_CUDART, 4, 3,
	  "cudaMemAdvise(p, n, advice, dev) -> cudaMemAdvise(p, n, advice, nvshim_migrate_location(dev)) (cudaCpuDeviceId: the host), guarded by #if CUDART_VERSION >= 13000", NULL },
	{ "cudaMemPrefetchAsync", K_LOCATION, "0", G_CUDART, 4, 2,
	  "cudaMemPrefetchAsync(p, n, dev, s) -> cudaMemPrefetchAsync(p, n, nvshim_migrate_location(dev), 0, s) (cudaCpuDeviceId: the host), guarded by #if CUDART_VERSION >= 13000", NULL },
	{ "cuMemAdvise", K_LOCATION, NULL, G_CUDA, 4, 3,
	  "cuMemAdvise(p, n, advice, dev) -> cuMemAdvise(p, n, advice, nvshim_migrate_culocation(dev)) (CU_DEVICE_CPU: the host), guarded by #if CUDA_VERSION >= 13000", NULL },
	{ "cuMemPrefetchAsync", K_LOCATION, "0", G_CUDA, 4, 2,
	  "cuMemPrefetchAsync(p, n, dev, s) -> cuMemPrefetchAsync(p, n, nvshim_migrate_culocation(dev), 0, s) (CU_DEVICE_CPU: the host), guarded by #if CUDA_VERSION >= 13000", NULL },
	CCCL("cub::Sum", "cuda::std::plus<>"),
	CCCL("cub::Max", "cuda::maximum<>"),
	CCCL("cub::Min", "cuda::minimum<>"),
	CCCL("cub::Equality", "cuda::std::equal_to<>"),
	CCCL("cub::Inequality", "cuda::std::not_equal_to<>"),
	CCCL("cub::Difference", "cuda::std::minus<>"),
	CCCL("cub::Division", "cuda::std::divides<>"),
	{ "cub::CountingInputIterator", K_TARGS, "thrust::counting_iterator<$1>", G_CCCL, 1, 0,
	  "cub::CountingInputIterator<T> -> thrust::counting_iterator<T>, cub::CountingInputIterator<T, OffsetT> -> "
	  "thrust::counting_iterator<T, thrust::use_default, thrust::use_default, OffsetT> (the offset type is the "
	  "difference type of both) (<thrust/iterator/counting_iterator.h> included), guarded by #if CCCL_MAJOR_VERSION >= 3",
	  "thrust::counting_iterator<$1, thrust::use_default, thrust::use_default, $2>" },
	{ "cub::ConstantInputIterator", K_TARGS, "thrust::constant_iterator<$1>", G_CCCL, 1, 0,
	  "cub::ConstantInputIterator<T> -> thrust::constant_iterator<T>, cub::ConstantInputIterator<T, OffsetT> -> "
	  "thrust::constant_iterator<T, OffsetT> (the type of the constructor's offset argument in both) "
	  "(<thrust/iterator/constant_iterator.h> included), guarded by #if CCCL_MAJOR_VERSION >= 3",
	  "thrust::constant_iterator<$1, $2>" },
	{ "cub::TransformInputIterator", K_TARGS, "thrust::transform_iterator<$2, $3, $1>", G_CCCL, 3, 0,
	  "cub::TransformInputIterator<V, Op, It> and cub::TransformInputIterator<V, Op, It, OffsetT> -> "
	  "thrust::transform_iterator<Op, It, V> (which has no offset type: its difference type is It's) "
	  "(<thrust/iterator/transform_iterator.h> included), guarded by #if CCCL_MAJOR_VERSION >= 3",
	  "thrust::transform_iterator<$2, $3, $1>" },
	{ "cub::DiscardOutputIterator", K_TARGS, "thrust::discard_iterator<>", G_CCCL, 0, 0,
	  "cub::DiscardOutputIterator<> and cub::DiscardOutputIterator<OffsetT> -> thrust::discard_iterator<> (which "
	  "has no offset type: its difference type is ptrdiff_t) (<thrust/iterator/discard_iterator.h> included), "
	  "guarded by #if CCCL_MAJOR_VERSION >= 3",
	  "thrust::discard_iterator<>" },
	{ "thrust::identity", K_IDENTITY, "nvshim_migrate_identity", G_NONE, 0, 0,
	  "thrust::identity<T> -> nvshim_migrate_identity<T>, a class template added after the leading #includes: "
	  "CCCL 2.8's thrust::identity (which converts its argument to T; cuda::std::identity does not), the same on "
	  "CCCL 2.x and 3.x; thrust::identity<> -> nvshim_migrate_identity<>", NULL },
	MACRO("CUB_MAX", "(((y) > (x)) ? (y) : (x))"),
	MACRO("CUB_MIN", "(((y) < (x)) ? (y) : (x))"),
	MACRO("CUB_QUOTIENT_FLOOR", "((x) / (y))"),
	MACRO("CUB_QUOTIENT_CEILING", "(((x) + (y) - 1) / (y))"),
	MACRO("CUB_ROUND_UP_NEAREST", "((((x) + (y) - 1) / (y)) * y)"),
	MACRO("CUB_ROUND_DOWN_NEAREST", "(((x) / (y)) * y)"),
	{ "thrust::unary_function", K_BASE, "argument_type result_type", G_NONE, 2, 0,
	  "struct F : thrust::unary_function<A, R> { -> struct F { using argument_type = A; using result_type = R;", NULL },
	{ "thrust::binary_function", K_BASE, "first_argument_type second_argument_type result_type", G_NONE, 3, 0,
	  "struct F : thrust::binary_function<A1, A2, R> { -> struct F { using first_argument_type = A1; "
	  "using second_argument_type = A2; using result_type = R;", NULL },
	RENAME("CUFFT_INCOMPLETE_PARAMETER_LIST", "((cufftResult)0xA)"),
	RENAME("CUFFT_PARSE_ERROR", "((cufftResult)0xC)"),
	RENAME("CUFFT_LICENSE_ERROR", "((cufftResult)0x0F)"),
	/* cuSPARSE 11's algorithm names (removed in 12.0): their new names, of the same values,
	 * are there since 11.2 (include/nvshim/compat/cusparse.h) */
	RENAME("CUSPARSE_MV_ALG_DEFAULT", "CUSPARSE_SPMV_ALG_DEFAULT"),
	RENAME("CUSPARSE_COOMV_ALG", "CUSPARSE_SPMV_COO_ALG1"),
	RENAME("CUSPARSE_CSRMV_ALG1", "CUSPARSE_SPMV_CSR_ALG1"),
	RENAME("CUSPARSE_CSRMV_ALG2", "CUSPARSE_SPMV_CSR_ALG2"),
	RENAME("CUSPARSE_MM_ALG_DEFAULT", "CUSPARSE_SPMM_ALG_DEFAULT"),
	RENAME("CUSPARSE_COOMM_ALG1", "CUSPARSE_SPMM_COO_ALG1"),
	RENAME("CUSPARSE_COOMM_ALG2", "CUSPARSE_SPMM_COO_ALG2"),
	RENAME("CUSPARSE_COOMM_ALG3", "CUSPARSE_SPMM_COO_ALG3"),
	RENAME("CUSPARSE_CSRMM_ALG1", "CUSPARSE_SPMM_CSR_ALG1"),
};

#define NRECIPES (sizeof(recipes) / sizeof(recipes[0]))

static const struct recipe *recipe_find(const char *name)
{
	for (size_t i = 0; i < NRECIPES; i++)
		if (!strcmp(recipes[i].name, name))
			return &recipes[i];
	return NULL;
}

const char *migrate_form(const char *name)
{
	const struct recipe *r = name ? recipe_find(name) : NULL;
	return r ? r->form : NULL;
}

const char *const *migrate_names(void)
{
	static const char *names[NRECIPES + 1];
	for (size_t i = 0; i < NRECIPES; i++)
		names[i] = recipes[i].name;
	names[NRECIPES] = NULL;
	return names;
}

void migrate_result_release(struct migrate_result *r)
{
	free(r->text);
	argv_release(&r->skipped);
	argv_release(&r->fixed);
	memset(r, 0, sizeof(*r));
}

/* ---- edits ---- */

struct edit {
	size_t b, e; /* bytes replaced */
	char *text;
	enum guard guard;
	size_t use; /* which use (index in fixed) it belongs to */
};

/* What find_device gave for an object, for the reads of a file, in order: what was found for an object is kept, and the next
 * read of it looks only at the tokens since the last one (a file with many reads stays linear). */
struct device_memo {
	char *objs;
	int arrow;
	size_t upto; /* the tokens before it were looked at */
	char *dev;   /* what they gave, NULL: nothing */
};

struct mig {
	struct scan sc;
	struct edit *v;
	size_t n, alloc;
	struct migrate_result *out;
	int need_attr, need_loc, need_prop, need_identity, need_tex;
	size_t *prop_names; /* tokens declared as a cudaDeviceProp (find_prop_names) */
	size_t nprop_names;
	int prop_names_done;
	const struct argv *ext_props; /* names the included headers declare so (may be NULL) */
	size_t uses;
	struct argv includes; /* headers the rewrites need, added with the helpers */
	struct device_memo memo[16];
};

static void add_edit(struct mig *m, size_t b, size_t e, char *text, enum guard g)
{
	if (m->n == m->alloc) {
		m->alloc = m->alloc ? m->alloc * 2 : 32;
		m->v = XRESIZEVEC(struct edit, m->v, m->alloc);
	}
	m->v[m->n++] = (struct edit){ b, e, text, g, m->uses };
}


static void skipped(struct mig *m, const struct tok *t, const char *name, const char *why)
{
	argv_pushf(&m->out->skipped, "%u: %s: %s", t->line, name, why);
}

static void fixed(struct mig *m, const struct tok *t, const char *name)
{
	argv_pushf(&m->out->fixed, "%u: %s", t->line, name);
	m->uses++;
}

/* OBJ.FIELD: the object expression's first token, walking back from the '.' or '->' at `dot`. */
static size_t object_start(const struct scan *sc, size_t dot)
{
	size_t k = dot;
	while (k > 0) {
		const struct tok *p = &sc->v[k - 1];
		if (p->c == ']') {
			int depth = 0;
			size_t j = k - 1;
			for (;; j--) {
				if (sc->v[j].c == ']')
					depth++;
				else if (sc->v[j].c == '[' && !--depth)
					break;
				if (!j)
					return dot;
			}
			k = j;
			continue;
		}
		if (p->c == 'i') {
			k--;
			if (k > 0 && (sc->v[k - 1].c == '.' || sc->v[k - 1].c == 'A')) {
				k--;
				continue;
			}
			return k;
		}
		return dot;
	}
	return dot;
}

/* The device a cudaDeviceProp was filled for: the second argument of the nearest
 * cudaGetDeviceProperties(&OBJ, DEV) (OBJ a pointer: (OBJ, DEV)) before token `before`; else, OBJ
 * a plain name, the struct it was copied from (`cudaDeviceProp OBJ = SRC;`, `OBJ = SRC;`) or,
 * for a pointer, the one it points at (`OBJ = &SRC;`), a few steps deep. NULL: not known.
 * Only the 100,000 tokens before the read are looked at. */
static char *find_device_from(const struct scan *sc, size_t before, size_t stop, const char *objs, int arrow, int depth);

static char *find_device(const struct scan *sc, size_t before, const char *objs, int arrow, int depth)
{
	/* No further back than 100,000 tokens (some 10,000 lines). */
	return find_device_from(sc, before, before > 100000 ? before - 100000 : 0, objs, arrow, depth);
}

/* find_device_memo(): the same for the reads of a file, in order. */

static char *find_device_memo(const struct scan *sc, struct device_memo *memo, size_t nmemo, size_t before,
			      const char *objs, int arrow)
{
	struct device_memo *slot = NULL;
	for (size_t k = 0; k < nmemo && !slot; k++)
		if (memo[k].objs && memo[k].arrow == arrow && !strcmp(memo[k].objs, objs) && memo[k].upto <= before)
			slot = &memo[k];
	char *dev;
	if (slot) {
		dev = find_device_from(sc, before, slot->upto, objs, arrow, 0);
		if (!dev && slot->dev)
			dev = xstrdup(slot->dev);
	} else {
		dev = find_device(sc, before, objs, arrow, 0);
		/* A free slot, else the first one. */
		for (size_t k = 0; k < nmemo && !slot; k++)
			if (!memo[k].objs)
				slot = &memo[k];
		if (!slot)
			slot = &memo[0];
		free(slot->objs);
		slot->objs = xstrdup(objs);
		slot->arrow = arrow;
	}
	free(slot->dev);
	slot->dev = dev ? xstrdup(dev) : NULL;
	slot->upto = before;
	return dev;
}

static char *find_device_from(const struct scan *sc, size_t before, size_t stop, const char *objs, int arrow, int depth)
{
	for (size_t k = before; k-- > stop;) {
		if (sc->v[k].c != 'i')
			continue;
		if (k + 1 < sc->n && sc->v[k + 1].c == '(') {
			char *fn = migrate_scan_name(sc, &sc->v[k]);
			int hit = !strcmp(fn, "cudaGetDeviceProperties") || !strcmp(fn, "cudaGetDeviceProperties_v2");
			free(fn);
			if (!hit)
				continue;
			size_t args[2][2], close;
			if (migrate_scan_args(sc, k + 1, &close, args, 2) != 2)
				continue;
			char *a0 = migrate_scan_span(sc, args[0][0], args[0][1]);
			char *a0s = migrate_scan_squeeze(a0);
			char *want = arrow ? xstrdup(objs) : concat("&", objs, NULL);
			char *want2 = arrow ? NULL : concat("&(", objs, ")", NULL);
			char *dev = NULL;
			if (!strcmp(a0s, want) || (want2 && !strcmp(a0s, want2)))
				dev = migrate_scan_span(sc, args[1][0], args[1][1]);
			free(a0);
			free(a0s);
			free(want);
			free(want2);
			if (dev)
				return dev;
			continue;
		}
		/* OBJ = SRC; or OBJ = &SRC; (a declaration or an assignment) */
		if (depth < 4 && k + 3 < sc->n && sc->v[k + 1].c == '=' && sc->v[k].e - sc->v[k].b == strlen(objs) &&
		    !memcmp(sc->s + sc->v[k].b, objs, strlen(objs)) && (k == 0 || (sc->v[k - 1].c != '.' && sc->v[k - 1].c != 'A'))) {
			size_t q = k + 2;
			int addr = sc->v[q].c == '&';
			q += addr;
			if (q + 1 < sc->n && sc->v[q].c == 'i' && sc->v[q + 1].c == ';' && addr == arrow) {
				char *src = migrate_scan_name(sc, &sc->v[q]);
				char *dev = find_device(sc, k, src, 0, depth + 1);
				free(src);
				if (dev)
					return dev;
			}
		}
	}
	return NULL;
}

/* 1 if the object expression [ob, dot) ends in a name (subscripts after it allowed) that the
 * file declares as a cudaDeviceProp: `cudaDeviceProp NAME`, with const, volatile, '&', '*' or a
 * template's '>' between (const cudaDeviceProp &p, cudaDeviceProp *q, std::vector<cudaDeviceProp>
 * v, a struct's member `cudaDeviceProp props;`). */
static void find_prop_names(struct mig *m);

static int declared_prop(struct mig *m, size_t ob, size_t dot)
{
	const struct scan *sc = &m->sc;
	size_t k = dot;
	while (k > ob && sc->v[k - 1].c == ']') {
		int depth = 0;
		do {
			k--;
			if (sc->v[k].c == ']')
				depth++;
			else if (sc->v[k].c == '[')
				depth--;
		} while (k > ob && depth);
	}
	if (k == ob || sc->v[k - 1].c != 'i')
		return 0;
	const struct tok *want = &sc->v[k - 1];
	size_t wl = want->e - want->b;
	if (!m->prop_names_done)
		find_prop_names(m);
	for (size_t j = 0; j < m->nprop_names; j++) {
		const struct tok *u = &sc->v[m->prop_names[j]];
		if (u->e - u->b == wl && !memcmp(sc->s + u->b, sc->s + want->b, wl))
			return 1;
	}
	for (size_t j = 0; m->ext_props && j < m->ext_props->n; j++)
		if (strlen(m->ext_props->v[j]) == wl && !memcmp(m->ext_props->v[j], sc->s + want->b, wl))
			return 1;
	return 0;
}

/* The names declared as a cudaDeviceProp (token indices), once per file. */
static void find_prop_names(struct mig *m)
{
	const struct scan *sc = &m->sc;
	size_t alloc = 0;
	m->prop_names_done = 1;
	for (size_t j = 0; j + 1 < sc->n; j++) {
		const struct tok *ty = &sc->v[j];
		if (ty->c != 'i' || ty->e - ty->b < 14 || memcmp(sc->s + ty->e - 14, "cudaDeviceProp", 14) ||
		    (ty->e - ty->b > 14 && sc->s[ty->e - 15] != ':' && sc->s[ty->e - 15] != ' '))
			continue;
		for (size_t q = j + 1; q < sc->n && q <= j + 5; q++) {
			const struct tok *u = &sc->v[q];
			if (u->c == '&' || u->c == '*' || u->c == '>')
				continue;
			if (u->c != 'i')
				break;
			size_t ul = u->e - u->b;
			if (!((ul == 5 && !memcmp(sc->s + u->b, "const", 5)) || (ul == 8 && !memcmp(sc->s + u->b, "volatile", 8)) ||
			      (ul == 12 && !memcmp(sc->s + u->b, "__restrict__", 12)))) {
				if (m->nprop_names == alloc) {
					alloc = alloc ? alloc * 2 : 16;
					m->prop_names = XRESIZEVEC(size_t, m->prop_names, alloc);
				}
				m->prop_names[m->nprop_names++] = q;
				break;
			}
		}
	}
}

static void do_field(struct mig *m, size_t i, const struct recipe *r, const char *name)
{
	const struct scan *sc = &m->sc;
	const struct tok *t = &sc->v[i];
	if (i == 0 || (sc->v[i - 1].c != '.' && sc->v[i - 1].c != 'A'))
		return;
	size_t dot = i - 1;
	const char *field = strstr(r->name, "::") + 2;
	size_t ob = object_start(sc, dot);
	if (ob == dot) {
		skipped(m, t, name, "not migrated: the object before the field is not a plain name");
		return;
	}
	/* A write, or its address taken. */
	const struct tok *nx = i + 1 < sc->n ? &sc->v[i + 1] : NULL;
	if ((nx && ((nx->c == '=' ) || nx->c == 'P' || nx->c == 'M' ||
		    (strchr("+-*/%&|^", nx->c) && i + 2 < sc->n && sc->v[i + 2].c == '=' && sc->v[i + 2].b == nx->e))) ||
	    (ob > 0 && (sc->v[ob - 1].c == '&' || sc->v[ob - 1].c == 'P' || sc->v[ob - 1].c == 'M') &&
	     /* not a binary & (after an operand) nor the second half of && */
	     (ob < 2 || (!strchr("in)]", sc->v[ob - 2].c) &&
			 !(sc->v[ob - 2].c == '&' && sc->v[ob - 2].e == sc->v[ob - 1].b))))) {
		skipped(m, t, name, "not migrated: the field is written or its address taken (the struct has no such field on CUDA 13)");
		return;
	}
	if (t->directive) {
		skipped(m, t, name, "not migrated: inside a preprocessor directive");
		return;
	}
	char *obj = migrate_scan_span(sc, ob, dot);
	char *objs = migrate_scan_squeeze(obj);
	int arrow = sc->v[dot].c == 'A';
	char *dev = find_device_memo(sc, m->memo, sizeof(m->memo) / sizeof(m->memo[0]), ob, objs, arrow);
	if (!dev && t->continued) {
		skipped(m, t, name, "not migrated: inside a macro (a version guard cannot go there)");
	} else if (!dev && declared_prop(m, ob, dot)) {
		/* The device is not in sight (a parameter, a member): the one whose PCI ids are the
		 * struct's, on CUDA 13; CUDA 12 reads the field as before. */
		char *call = arrow ? xasprintf("nvshim_migrate_prop_attr(%s, %s)", obj, r->to)
				   : xasprintf("nvshim_migrate_prop_attr(&(%s), %s)", obj, r->to);
		add_edit(m, sc->v[ob].b, t->e, call, G_CUDART);
		m->need_prop = 1;
		fixed(m, t, name);
	} else if (!dev) {
		char *why = xasprintf("not migrated: no cudaGetDeviceProperties(%s%s, device) before it names the device, "
				      "and no declaration of it as a cudaDeviceProp in this file or the headers it includes "
				      "with quotes", arrow ? "" : "&", obj);
		skipped(m, t, name, why);
		free(why);
	} else {
		add_edit(m, sc->v[ob].b, t->e, xasprintf("nvshim_migrate_attr(%s, %s)", r->to, dev), G_NONE);
		m->need_attr = 1;
		fixed(m, t, name);
		(void)field;
	}
	free(dev);
	free(obj);
	free(objs);
}

/* 1 if the argument (tokens [b, e)) is a memory location already: a brace list, a name declared
 * with `type` in the file, or one whose text says Location/location. */
static int is_location(const struct scan *sc, size_t b, size_t e, const char *type)
{
	if (b >= e)
		return 0;
	if (sc->v[b].c == '{')
		return 1;
	for (size_t k = b; k < e; k++)
		if (sc->v[k].c == 'i' && (memmem(sc->s + sc->v[k].b, sc->v[k].e - sc->v[k].b, "ocation", 7) ||
					  memmem(sc->s + sc->v[k].b, sc->v[k].e - sc->v[k].b, "loc", 3)))
			return 1;
	if (e - b != 1 || sc->v[b].c != 'i')
		return 0;
	size_t tl = strlen(type), nl = sc->v[b].e - sc->v[b].b;
	for (size_t k = 0; k + 1 < sc->n; k++) {
		const struct tok *t = &sc->v[k], *u = &sc->v[k + 1];
		if (t->c == 'i' && t->e - t->b == tl && !memcmp(sc->s + t->b, type, tl) && u->c == 'i' &&
		    u->e - u->b == nl && !memcmp(sc->s + u->b, sc->s + sc->v[b].b, nl))
			return 1;
	}
	return 0;
}

static void do_args(struct mig *m, size_t i, const struct recipe *r, const char *name)
{
	const struct scan *sc = &m->sc;
	const struct tok *t = &sc->v[i];
	/* The argument list: after the name, or, where the name is a macro's argument and the list
	 * the next one (MACRO(NAME, (ARGS)), as CUDAPP_CALL_GUARDED(cuCtxCreate, (&ctx, f, d))), that
	 * list: the macro pastes them into the call. */
	size_t paren = i + 1;
	int as_argument = i > 0 && (sc->v[i - 1].c == '(' || sc->v[i - 1].c == ',');
	if (as_argument && i + 2 < sc->n && sc->v[i + 1].c == ',' && sc->v[i + 2].c == '(')
		paren = i + 2;
	if (paren >= sc->n || sc->v[paren].c != '(') {
		/* passed on without its arguments (a macro that calls it with others, a function
		 * pointer): nothing to rewrite here, but the use stays as it was */
		if (as_argument && i + 1 < sc->n && (sc->v[i + 1].c == ',' || sc->v[i + 1].c == ')'))
			skipped(m, t, name, "not migrated: passed as an argument, not called here (a macro that "
				"calls it, or a function pointer): rewrite the call by hand");
		return;
	}
	size_t args[16][2], close;
	int n = migrate_scan_args(sc, paren, &close, args, 16);
	if (n < 0) {
		skipped(m, t, name, "not migrated: the call does not close");
		return;
	}
	for (int a = 0; a < n && a < 16; a++)
		if (args[a][0] >= args[a][1]) {
			skipped(m, t, name, "not migrated: an empty argument (a macro's, written in later)");
			return;
		}
	int want = r->argc;
	if (n != want) {
		/* The new form already (one more, or one less when dropping), or a default argument. */
		int newn = r->kind == K_ARGS && !r->to ? want - 1 : want + 1;
		if (n != newn && !(r->kind == K_LOCATION && r->to && n == 3)) {
			char *why = xasprintf("not migrated: %d arguments (the old form has %d)", n, want);
			skipped(m, t, name, why);
			free(why);
		}
		if (!(r->kind == K_LOCATION && r->to && n == 3))
			return;
	}
	if (t->directive || t->continued) {
		skipped(m, t, name, "not migrated: inside a preprocessor directive or macro (a version guard cannot go there)");
		return;
	}
	if (r->kind == K_ARGS && r->to && r->pos == n) {
		/* after the last argument */
		size_t at = sc->v[args[n - 1][1] - 1].e;
		add_edit(m, at, at, concat(", ", r->to, NULL), r->guard);
	} else if (r->kind == K_ARGS && r->to) {
		size_t at = sc->v[args[r->pos][0]].b;
		add_edit(m, at, at, concat(r->to, ", ", NULL), r->guard);
	} else if (r->kind == K_ARGS) {
		/* Drop argument pos and the comma after it. */
		add_edit(m, sc->v[args[r->pos][0]].b, sc->v[args[r->pos + 1][0]].b, xstrdup(""), r->guard);
	} else { /* K_LOCATION */
		size_t db = sc->v[args[r->pos][0]].b, de = sc->v[args[r->pos][1] - 1].e;
		char *dev = migrate_scan_bytes(sc, db, de);
		const char *type = r->guard == G_CUDA ? "CUmemLocation" : "cudaMemLocation";
		if (is_location(sc, args[r->pos][0], args[r->pos][1], type)) {
			free(dev);
			return; /* the new form already */
		}
		int stream_follows = r->to && n == 4;
		add_edit(m, db, de,
			 xasprintf("nvshim_migrate_%slocation(%s)%s", r->guard == G_CUDA ? "cu" : "", dev,
				   r->to && n == 3 ? ", 0" : ""),
			 r->guard);
		if (stream_follows) {
			size_t at = sc->v[args[3][0]].b;
			add_edit(m, at, at, xstrdup("0, "), r->guard);
		}
		free(dev);
		m->need_loc |= r->guard == G_CUDA ? 2 : 1;
	}
	fixed(m, t, name);
}

/* $1 $2 -> x y in the template: "x" and "y" stand for the arguments. */
static char *macro_expand(const char *tmpl, const char *x, const char *y)
{
	size_t cap = strlen(tmpl) + 4 * (strlen(x) + strlen(y)) + 1;
	char *out = XNEWVEC(char, cap), *o = out;
	for (const char *p = tmpl; *p; p++) {
		if ((*p == 'x' || *p == 'y') && (p == tmpl || !migrate_scan_ident_char((unsigned char)p[-1])) &&
		    !migrate_scan_ident_char((unsigned char)p[1])) {
			const char *a = *p == 'x' ? x : y;
			size_t l = strlen(a);
			memcpy(o, a, l);
			o += l;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

static void do_macro(struct mig *m, size_t i, const struct recipe *r, const char *name)
{
	const struct scan *sc = &m->sc;
	const struct tok *t = &sc->v[i];
	if (i + 1 >= sc->n || sc->v[i + 1].c != '(')
		return;
	/* #ifndef CUB_MAX / #define CUB_MAX(a, b) of the program's own: leave it. */
	if (t->directive && i > 0 && sc->v[i - 1].c == 'i') {
		char *d = migrate_scan_name(sc, &sc->v[i - 1]);
		int own = !strcmp(d, "define") || !strcmp(d, "ifdef") || !strcmp(d, "ifndef") || !strcmp(d, "undef");
		free(d);
		if (own)
			return;
	}
	size_t args[4][2], close;
	int n = migrate_scan_args(sc, i + 1, &close, args, 4);
	if (n != 2) {
		skipped(m, t, name, "not migrated: not two arguments");
		return;
	}
	char *x = migrate_scan_span(sc, args[0][0], args[0][1]);
	char *y = migrate_scan_span(sc, args[1][0], args[1][1]);
	add_edit(m, t->b, sc->v[close].e, macro_expand(r->to, x, y), G_NONE);
	free(x);
	free(y);
	fixed(m, t, name);
}


/* struct F : public thrust::unary_function<A, R> { ... */
static void do_base(struct mig *m, size_t i, const struct recipe *r, const char *name)
{
	const struct scan *sc = &m->sc;
	const struct tok *t = &sc->v[i];
	if (i + 1 >= sc->n || sc->v[i + 1].c != '<')
		return;
	/* Back over public/private/protected/virtual to ':' or ','. */
	size_t k = i;
	while (k > 0 && sc->v[k - 1].c == 'i') {
		char *w = migrate_scan_name(sc, &sc->v[k - 1]);
		int acc = !strcmp(w, "public") || !strcmp(w, "private") || !strcmp(w, "protected") || !strcmp(w, "virtual");
		free(w);
		if (!acc)
			break;
		k--;
	}
	if (k < 2 || (sc->v[k - 1].c != ':' && sc->v[k - 1].c != ','))
		return; /* not a base clause */
	size_t gt = migrate_scan_closing(sc, i + 1);
	if (gt >= sc->n) {
		skipped(m, t, name, "not migrated: its template arguments do not close");
		return;
	}
	/* The template arguments, split at top-level commas. */
	size_t targs[4][2];
	int nt = migrate_scan_targs(sc, i + 1, gt, targs, 4);
	if (nt != r->argc) {
		skipped(m, t, name, "not migrated: template arguments not as expected");
		return;
	}
	/* What follows: ',' (more bases) or '{'. */
	if (gt + 1 >= sc->n || (sc->v[gt + 1].c != '{' && sc->v[gt + 1].c != ',')) {
		skipped(m, t, name, "not migrated: not a base of a class definition");
		return;
	}
	if (t->directive || t->continued) {
		skipped(m, t, name, "not migrated: inside a preprocessor directive or macro");
		return;
	}
	/* The class body's '{'. */
	size_t brace = gt + 1;
	while (brace < sc->n && sc->v[brace].c != '{' && sc->v[brace].c != ';')
		brace++;
	if (brace >= sc->n || sc->v[brace].c != '{') {
		skipped(m, t, name, "not migrated: no class body");
		return;
	}
	size_t bodyend = migrate_scan_closing(sc, brace);
	/* Remove ": base" (only base: the ':' too) or ", base" / "base, ". */
	int only = sc->v[k - 1].c == ':' && sc->v[gt + 1].c == '{';
	if (only) {
		/* From the end of the token before ':' to the end of '>'. */
		add_edit(m, sc->v[k - 2].e, sc->v[gt].e, xstrdup(""), G_NONE);
	} else if (sc->v[k - 1].c == ',') {
		add_edit(m, sc->v[k - 2].e, sc->v[gt].e, xstrdup(""), G_NONE);
	} else {
		add_edit(m, sc->v[k].b, sc->v[gt + 2].b, xstrdup(""), G_NONE);
	}
	/* The aliases the base declared, unless the class declares them itself. */
	char *names = xstrdup(r->to);
	char *decl = xstrdup("");
	int a = 0;
	for (char *w = strtok(names, " "); w; w = strtok(NULL, " "), a++) {
		int has = 0;
		for (size_t j = brace + 1; j < bodyend && j < sc->n && !has; j++)
			if (sc->v[j].c == 'i' && sc->v[j].e - sc->v[j].b == strlen(w) && !memcmp(sc->s + sc->v[j].b, w, strlen(w)) &&
			    j + 1 < sc->n && (sc->v[j + 1].c == ';' || sc->v[j + 1].c == '=') && j > brace + 1)
				has = 1;
		if (has)
			continue;
		char *arg = migrate_scan_span(sc, targs[a][0], targs[a][1]);
		char *d = xasprintf("%s using %s = %s;", decl, w, arg);
		free(decl);
		free(arg);
		decl = d;
	}
	free(names);
	if (*decl)
		add_edit(m, sc->v[brace].e, sc->v[brace].e, xstrdup(decl + 0), G_NONE);
	free(decl);
	fixed(m, t, name);
}

static const char *targs_header(const char *name)
{
	return !strcmp(name, "cub::CountingInputIterator")   ? "thrust/iterator/counting_iterator.h"
	       : !strcmp(name, "cub::ConstantInputIterator") ? "thrust/iterator/constant_iterator.h"
	       : !strcmp(name, "cub::DiscardOutputIterator") ? "thrust/iterator/discard_iterator.h"
							     : "thrust/iterator/transform_iterator.h";
}

static char *targs_rewrite(const struct scan *sc, size_t i, const struct recipe *r, size_t *end);

/* The text of tokens [tb, te) with the iterators of the K_TARGS recipes in it rewritten (a
 * cub::CountingInputIterator<int> inside a cub::TransformInputIterator's arguments). */
static char *span_rewritten(const struct scan *sc, size_t tb, size_t te)
{
	if (tb >= te)
		return xstrdup("");
	char *acc = xstrdup("");
	size_t pos = sc->v[tb].b;
	for (size_t k = tb; k < te; k++) {
		if (sc->v[k].c != 'i' || k + 1 >= te || sc->v[k + 1].c != '<')
			continue;
		char *nm = migrate_scan_name(sc, &sc->v[k]);
		const struct recipe *r = recipe_find(nm);
		free(nm);
		size_t end;
		char *sub = r && r->kind == K_TARGS ? targs_rewrite(sc, k, r, &end) : NULL;
		if (!sub || end >= te) {
			free(sub);
			continue;
		}
		/* (not xasprintf's %.*s: libiberty sizes it with strlen, and the text need not end in NUL) */
		char *between = migrate_scan_bytes(sc, pos, sc->v[k].b);
		char *next = concat(acc, between, sub, NULL);
		free(between);
		free(acc);
		free(sub);
		acc = next;
		pos = sc->v[end].e;
		k = end;
	}
	char *rest = migrate_scan_bytes(sc, pos, sc->v[te - 1].e);
	char *out = concat(acc, rest, NULL);
	free(rest);
	free(acc);
	return out;
}

/* The rewrite of the K_TARGS use at token i (NAME<...>), its '>' in *end; NULL: not this form
 * (*end is then the number of template arguments, or -1 when they do not close). */
static char *targs_rewrite(const struct scan *sc, size_t i, const struct recipe *r, size_t *end)
{
	size_t gt = migrate_scan_closing(sc, i + 1);
	if (gt >= sc->n) {
		*end = (size_t)-1;
		return NULL;
	}
	size_t targs[8][2];
	int nt = migrate_scan_targs(sc, i + 1, gt, targs, 8);
	if (nt == 1 && targs[0][0] == targs[0][1])
		nt = 0; /* NAME<> */
	const char *to = nt == r->argc ? r->to : nt == r->argc + 1 && r->to_offset ? r->to_offset : NULL;
	if (!to) {
		*end = (size_t)nt;
		return NULL;
	}
	char *acc = xstrdup("");
	for (const char *p = to; *p; p++) {
		char *next;
		if (*p == '$' && p[1] >= '1' && p[1] <= '0' + nt) {
			int k = p[1] - '1';
			char *a = span_rewritten(sc, targs[k][0], targs[k][1]);
			next = concat(acc, a, NULL);
			free(a);
			p++;
		} else {
			char c[2] = { *p, 0 };
			next = concat(acc, c, NULL);
		}
		free(acc);
		acc = next;
	}
	*end = gt;
	return acc;
}

static void do_targs(struct mig *m, size_t i, const struct recipe *r, const char *name)
{
	const struct scan *sc = &m->sc;
	const struct tok *t = &sc->v[i];
	if (i + 1 >= sc->n || sc->v[i + 1].c != '<')
		return;
	size_t gt;
	char *acc = targs_rewrite(sc, i, r, &gt);
	if (!acc && gt == (size_t)-1) {
		skipped(m, t, name, "not migrated: its template arguments do not close");
		return;
	}
	if (!acc) {
		char *why = xasprintf("not migrated: %d template arguments (the old form has %d, or %d with an "
				      "offset type)", (int)gt, r->argc, r->argc + 1);
		skipped(m, t, name, why);
		free(why);
		return;
	}
	if (t->directive || t->continued) {
		free(acc);
		skipped(m, t, name, "not migrated: inside a preprocessor directive or macro (a version guard cannot go there)");
		return;
	}
	add_edit(m, t->b, sc->v[gt].e, acc, r->guard);
	const char *h = targs_header(r->name);
	int have = 0;
	for (size_t k = 0; k < m->includes.n && !have; k++)
		have = !strcmp(m->includes.v[k], h);
	if (!have)
		argv_push(&m->includes, h);
	fixed(m, t, name);
}

/* thrust::identity<T> -> nvshim_migrate_identity<T>; thrust::identity( or { (CTAD, C++17) ->
 * nvshim_migrate_identity<>( or {. Not a using-declaration or a name passed on alone. */
static void do_identity(struct mig *m, size_t i, const struct recipe *r, const char *name)
{
	const struct scan *sc = &m->sc;
	const struct tok *t = &sc->v[i];
	const struct tok *nx = i + 1 < sc->n ? &sc->v[i + 1] : NULL;
	if (t->directive && i > 0 && sc->v[i - 1].c == 'i') {
		char *d = migrate_scan_name(sc, &sc->v[i - 1]);
		int own = !strcmp(d, "define") || !strcmp(d, "ifdef") || !strcmp(d, "ifndef") || !strcmp(d, "undef");
		free(d);
		if (own)
			return;
	}
	if (nx && nx->c == '<')
		add_edit(m, t->b, t->e, xstrdup(r->to), G_NONE);
	else if (nx && (nx->c == '(' || nx->c == '{'))
		add_edit(m, t->b, t->e, concat(r->to, "<>", NULL), G_NONE);
	else {
		skipped(m, t, name, "not migrated: not a use of the class template (thrust::identity<T>, "
			"thrust::identity{}): rewrite it by hand (cuda::std::identity returns its argument as it "
			"is; thrust::identity<T> converted it to T)");
		return;
	}
	m->need_identity = 1;
	fixed(m, t, name);
}

static void do_rename(struct mig *m, size_t i, const struct recipe *r, const char *name)
{
	const struct scan *sc = &m->sc;
	const struct tok *t = &sc->v[i];
	if (r->guard != G_NONE && (t->directive || t->continued)) {
		skipped(m, t, name, "not migrated: inside a preprocessor directive or macro (a version guard cannot go there)");
		return;
	}
	/* #define of the program's own, or a declaration of the name: leave it. */
	if (t->directive && i > 0 && sc->v[i - 1].c == 'i') {
		char *d = migrate_scan_name(sc, &sc->v[i - 1]);
		int own = !strcmp(d, "define") || !strcmp(d, "ifdef") || !strcmp(d, "ifndef") || !strcmp(d, "undef") || !strcmp(d, "defined");
		free(d);
		if (own)
			return;
	}
	/* The name, and a "()" after a cub operator type stays as it is. */
	add_edit(m, t->b, t->e, xstrdup(r->to), r->guard);
	fixed(m, t, name);
}

static void do_value(struct mig *m, size_t i, const struct recipe *r, const char *name)
{
	const struct scan *sc = &m->sc;
	const struct tok *t = &sc->v[i];
	if (i + 1 >= sc->n || sc->v[i + 1].c != '(')
		return;
	size_t args[1][2], close;
	if (migrate_scan_args(sc, i + 1, &close, args, 1) < 0) {
		skipped(m, t, name, "not migrated: the call does not close");
		return;
	}
	add_edit(m, t->b, sc->v[close].e, xstrdup(r->to), G_NONE);
	fixed(m, t, name);
}

static int edit_cmp(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return x->e < y->e ? -1 : x->e > y->e;
}

/* Lines [from, to) of the text with the edits of [e0, e1) applied (only those with guard G_NONE
 * when `plain`). */
static void apply_lines(struct strbuf *out, const struct mig *m, size_t from, size_t to, size_t e0, size_t e1, int plain)
{
	size_t pos = from;
	for (size_t k = e0; k < e1; k++) {
		const struct edit *e = &m->v[k];
		if (plain && e->guard != G_NONE)
			continue;
		if (e->b < pos)
			continue; /* overlapping: the first wins */
		strbuf_add(out, m->sc.s + pos, e->b - pos);
		strbuf_addstr(out, e->text);
		pos = e->e;
	}
	if (pos < to)
		strbuf_add(out, m->sc.s + pos, to - pos);
}

static void memo_release(struct mig *m)
{
	free(m->prop_names);
	for (size_t k = 0; k < sizeof(m->memo) / sizeof(m->memo[0]); k++) {
		free(m->memo[k].objs);
		free(m->memo[k].dev);
	}
}

/* Texture and surface references: why migrate leaves them, and, per use, what to write. */
static const char texref_why[] =
	"texture and surface references are gone since CUDA 12.0; migrate rewrites only a file-scope "
	"texture<T, 1, cudaReadModeElementType> REF bound in the same file with cudaBindTexture(0, REF, ptr[, desc], size) "
	"and read with tex1Dfetch(REF, i), where a texture object in a __device__ variable gives the kernels the "
	"same values; other forms (2D and array binds, filtering, normalized reads, an offset, a surface) need "
	"the object made for them and passed to the kernels, a change of signatures and launches across "
	"functions and files that a rewrite of the text cannot check";

static const char *texref_advice(const char *name)
{
	static const struct {
		const char *name, *what;
	} advice[] = {
		{ "texture", "a cudaTextureObject_t created where the reference is bound and passed to each kernel that reads it" },
		{ "textureReference", "a cudaTextureObject_t (cudaCreateTextureObject) in place of the reference" },
		{ "surface", "a cudaSurfaceObject_t created with cudaCreateSurfaceObject and passed to each kernel that uses it" },
		{ "surfaceReference", "a cudaSurfaceObject_t (cudaCreateSurfaceObject) in place of the reference" },
		{ "cudaBindTexture", "cudaCreateTextureObject(&obj, &res, &td, NULL) with res.resType = cudaResourceTypeLinear "
				     "and res.res.linear's devPtr, desc and sizeInBytes as bound here (devPtr aligned to "
				     "textureAlignment: an object has no offset)" },
		{ "cudaBindTexture2D", "cudaCreateTextureObject with res.resType = cudaResourceTypePitch2D and res.res.pitch2D "
				       "as bound here" },
		{ "cudaBindTextureToArray", "cudaCreateTextureObject with res.resType = cudaResourceTypeArray (res.res.array.array)" },
		{ "cudaBindTextureToMipmappedArray", "cudaCreateTextureObject with res.resType = cudaResourceTypeMipmappedArray" },
		{ "cudaUnbindTexture", "cudaDestroyTextureObject(obj)" },
		{ "cudaGetTextureAlignmentOffset", "nothing: a texture object starts at its devPtr" },
		{ "cudaGetTextureReference", "the cudaTextureObject_t itself: there is no reference to look up" },
		{ "cudaBindSurfaceToArray", "cudaCreateSurfaceObject(&obj, &res) with res.resType = cudaResourceTypeArray" },
		{ "cudaGetSurfaceReference", "the cudaSurfaceObject_t itself: there is no reference to look up" },
	};
	for (size_t k = 0; k < sizeof(advice) / sizeof(advice[0]); k++)
		if (!strcmp(name, advice[k].name))
			return advice[k].what;
	if (!strncmp(name, "tex", 3))
		return "the fetch's object form, FETCH<T>(obj, ...), obj the kernel's cudaTextureObject_t parameter (T the "
		       "reference's element type, float for cudaReadModeNormalizedFloat)";
	if (!strncmp(name, "surf", 4))
		return "the same call with the kernel's cudaSurfaceObject_t parameter in place of the reference";
	return NULL;
}

/* A use of an entry of the API table that has no recipe: said, the text left. Struct fields
 * (STRUCT::FIELD) match a member access of FIELD; texture fetches only in their reference form
 * (no template argument); texture and surface only as templates; surf* never (the object form
 * is spelt the same). */
static void known_use(struct mig *m, size_t i, const char *name, const struct argv *known)
{
	const struct scan *sc = &m->sc;
	const struct tok *t = &sc->v[i];
	int member = i > 0 && (sc->v[i - 1].c == '.' || sc->v[i - 1].c == 'A');
	for (size_t k = 0; k < known->n; k++) {
		const char *kn = known->v[k];
		const char *sep = strstr(kn, "::");
		int hit;
		if (member)
			hit = sep && !strncmp(kn, "cudaDeviceProp::", 16) && !strcmp(sep + 2, name);
		else if (t->c == 'h')
			hit = !strcmp(kn, name);
		else
			hit = !strcmp(kn, name);
		if (!hit)
			continue;
		const struct tok *nx = i + 1 < sc->n ? &sc->v[i + 1] : NULL;
		if (!member && t->c == 'i' && !sep) {
			if (!strncmp(name, "surf", 4) && strncmp(name, "surface", 7))
				return;
			if ((!strcmp(name, "texture") || !strcmp(name, "surface")) && (!nx || nx->c != '<'))
				return;
			if (!strncmp(name, "tex", 3) && strcmp(name, "texture") && (!nx || nx->c != '('))
				return;
		}
		const char *tex = texref_advice(kn);
		char *why = tex ? xasprintf("not migrated: %s; here, write %s (docs/migrate.md, \"Texture and surface "
					    "references\"; `nvshim explain-api %s`)", texref_why, tex, kn)
				: xasprintf("no automatic rewrite; see `nvshim explain-api %s`", kn);
		skipped(m, t, kn, why);
		free(why);
		return;
	}
}

/* ---- texture references: the simple pattern ---- */

/* The call whose argument list holds token j as a whole argument: its name's token in *callee,
 * the argument's index in *argi. 0 when j is not a whole argument of a named call. */
static int enclosing_call(const struct scan *sc, size_t j, size_t *callee, int *argi)
{
	if (j + 1 >= sc->n || (sc->v[j + 1].c != ',' && sc->v[j + 1].c != ')'))
		return 0;
	int depth = 0, commas = 0;
	for (size_t k = j; k-- > 0;) {
		char c = sc->v[k].c;
		if (c == ')' || c == ']' || c == '}')
			depth++;
		else if (c == '(' || c == '[' || c == '{') {
			if (depth--)
				continue;
			if (c != '(' || k == 0 || sc->v[k - 1].c != 'i')
				return 0;
			if (sc->v[j - 1].c != '(' && sc->v[j - 1].c != ',')
				return 0;
			*callee = k - 1;
			*argi = commas;
			return 1;
		} else if (c == ',' && !depth)
			commas++;
		else if (c == ';')
			return 0;
	}
	return 0;
}

static int tok_is(const struct scan *sc, size_t k, const char *s)
{
	size_t l = strlen(s);
	return k < sc->n && sc->v[k].c == 'i' && sc->v[k].e - sc->v[k].b == l && !memcmp(sc->s + sc->v[k].b, s, l);
}

/* A file-scope `texture<T[, 1[, cudaReadModeElementType]]> NAME;` whose every other use in the
 * file is tex1Dfetch(NAME, i), cudaBindTexture(0, NAME, ptr[, desc], size) (0, NULL or nullptr:
 * no offset asked for) or cudaUnbindTexture(NAME), with at least one bind: NAME becomes a
 * __device__ cudaTextureObject_t that the kernels read, tex1Dfetch(NAME, i) its object form
 * tex1Dfetch<T>(NAME, i), the bind and the unbind two helpers that create and destroy the object
 * for the current device (docs/migrate.md). Any other texture reference is left, and said. The
 * tokens rewritten are marked in `done` (no "no automatic rewrite" message for them). */
static void texref_pass(struct mig *m, unsigned char *done)
{
	const struct scan *sc = &m->sc;
	int depth = 0;
	for (size_t i = 0; i < sc->n; i++) {
		const struct tok *t = &sc->v[i];
		if (!t->directive) {
			if (t->c == '{')
				depth++;
			else if (t->c == '}' && depth > 0)
				depth--;
		}
		if (depth || t->old_side || t->directive || t->continued || !tok_is(sc, i, "texture") || i + 1 >= sc->n ||
		    sc->v[i + 1].c != '<')
			continue;
		if (i > 0 && sc->v[i - 1].c != ';' && sc->v[i - 1].c != '}' && !sc->v[i - 1].directive && !tok_is(sc, i - 1, "static"))
			continue;
		size_t gt = migrate_scan_closing(sc, i + 1);
		const char *why = NULL;
		size_t targs[4][2];
		int nt = gt < sc->n ? migrate_scan_targs(sc, i + 1, gt, targs, 4) : 0;
		char *dim = nt >= 2 ? migrate_scan_span(sc, targs[1][0], targs[1][1]) : xstrdup("1");
		char *mode = nt >= 3 ? migrate_scan_span(sc, targs[2][0], targs[2][1]) : xstrdup("cudaReadModeElementType");
		if (nt < 1 || nt > 3 || targs[0][0] == targs[0][1])
			why = "its template arguments are not texture<T, DIM, MODE>";
		else if (strcmp(dim, "1") && strcmp(dim, "cudaTextureType1D"))
			why = "it is not one-dimensional (its bind and reads are not the linear-memory pattern)";
		else if (strcmp(mode, "cudaReadModeElementType"))
			why = "its read mode is not cudaReadModeElementType";
		else if (gt + 2 >= sc->n || sc->v[gt + 1].c != 'i' || sc->v[gt + 2].c != ';')
			why = "it is not a declaration of one name (texture<...> NAME;)";
		free(dim);
		free(mode);
		size_t name = gt + 1;
		/* Every use of the name. */
		size_t *use = NULL, nuse = 0;
		int binds = 0;
		unsigned bad_line = 0;
		for (size_t j = 0; !why && j < sc->n; j++) {
			if (j == name || sc->v[j].c != 'i' || sc->v[j].old_side || sc->v[j].e - sc->v[j].b != sc->v[name].e - sc->v[name].b ||
			    memcmp(sc->s + sc->v[j].b, sc->s + sc->v[name].b, sc->v[name].e - sc->v[name].b))
				continue;
			if (j > 0 && (sc->v[j - 1].c == '.' || sc->v[j - 1].c == 'A'))
				continue; /* a member of that name elsewhere */
			size_t callee;
			int argi;
			int ok = !sc->v[j].directive && !sc->v[j].continued && enclosing_call(sc, j, &callee, &argi);
			if (ok && tok_is(sc, callee, "tex1Dfetch") && argi == 0 && sc->v[callee + 1].c == '(') {
				;
			} else if (ok && tok_is(sc, callee, "cudaBindTexture") && argi == 1) {
				size_t args[6][2], close;
				int na = migrate_scan_args(sc, callee + 1, &close, args, 6);
				ok = (na == 4 || na == 5) && args[0][1] == args[0][0] + 1 &&
				     (tok_is(sc, args[0][0], "NULL") || tok_is(sc, args[0][0], "nullptr") ||
				      (sc->v[args[0][0]].c == 'n' && sc->v[args[0][0]].e == sc->v[args[0][0]].b + 1 &&
				       sc->s[sc->v[args[0][0]].b] == '0'));
				binds += ok;
			} else if (ok && tok_is(sc, callee, "cudaUnbindTexture") && argi == 0) {
				size_t args[2][2], close;
				ok = migrate_scan_args(sc, callee + 1, &close, args, 2) == 1;
			} else {
				ok = 0;
			}
			if (!ok) {
				bad_line = sc->v[j].line;
				break;
			}
			use = XRESIZEVEC(size_t, use, nuse + 1);
			use[nuse++] = callee;
		}
		char *reason = NULL;
		if (why)
			reason = xstrdup(why);
		else if (bad_line)
			reason = xasprintf("its use on line %u is not tex1Dfetch(REF, i), cudaBindTexture(0, REF, ptr[, desc], size) or "
					   "cudaUnbindTexture(REF)", bad_line);
		else if (!binds)
			reason = xstrdup("it is not bound in this file (cudaBindTexture(0, REF, ptr, size))");
		if (reason) {
			char *msg = xasprintf("not migrated: %s, and %s; here, write %s (docs/migrate.md, \"Texture and surface "
					      "references\"; `nvshim explain-api texture`)", texref_why, reason, texref_advice("texture"));
			skipped(m, t, "texture", msg);
			free(msg);
			free(reason);
			free(use);
			done[i] = 1;
			continue;
		}
		char *type = migrate_scan_span(sc, targs[0][0], targs[0][1]);
		/* static: a reference was one per translation unit (two units' same names never met) */
		add_edit(m, t->b, sc->v[gt].e,
			 xstrdup(i > 0 && tok_is(sc, i - 1, "static") ? "__device__ cudaTextureObject_t"
								      : "static __device__ cudaTextureObject_t"),
			 G_NONE);
		done[i] = 1;
		fixed(m, t, "texture");
		for (size_t u = 0; u < nuse; u++) {
			const struct tok *c = &sc->v[use[u]];
			done[use[u]] = 1;
			if (tok_is(sc, use[u], "tex1Dfetch")) {
				add_edit(m, c->e, c->e, xasprintf("<%s>", type), G_NONE);
				fixed(m, c, "tex1Dfetch");
			} else if (tok_is(sc, use[u], "cudaBindTexture")) {
				add_edit(m, c->b, c->e, xasprintf("nvshim_migrate_bind_texture<%s>", type), G_NONE);
				fixed(m, c, "cudaBindTexture");
			} else {
				add_edit(m, c->b, c->e, xstrdup("nvshim_migrate_unbind_texture"), G_NONE);
				fixed(m, c, "cudaUnbindTexture");
			}
		}
		m->need_tex = 1;
		free(type);
		free(use);
	}
}

void migrate_declarations(const char *text, size_t len, struct argv *props, struct argv *quoted)
{
	struct mig m;
	memset(&m, 0, sizeof(m));
	migrate_scan_text(&m.sc, text, len);
	const struct scan *sc = &m.sc;
	find_prop_names(&m);
	for (size_t j = 0; j < m.nprop_names; j++) {
		const struct tok *u = &sc->v[m.prop_names[j]];
		char *nm = migrate_scan_bytes(sc, u->b, u->e);
		int have = 0;
		for (size_t k = 0; k < props->n && !have; k++)
			have = !strcmp(props->v[k], nm);
		if (have)
			free(nm);
		else
			argv_push_owned(props, nm);
	}
	for (size_t j = 0; j < sc->n; j++)
		if (sc->v[j].c == 'h' && sc->v[j].b > 0 && sc->s[sc->v[j].b - 1] == '"')
			argv_push_owned(quoted, migrate_scan_bytes(sc, sc->v[j].b, sc->v[j].e));
	free(m.prop_names);
	migrate_scan_release(&m.sc);
}

void migrate_text(const char *text, size_t len, const struct argv *known, struct migrate_result *out)
{
	migrate_text_with(text, len, known, NULL, out);
}

void migrate_text_with(const char *text, size_t len, const struct argv *known, const struct argv *props,
		       struct migrate_result *out)
{
	memset(out, 0, sizeof(*out));
	argv_init(&out->skipped);
	argv_init(&out->fixed);
	struct mig m;
	memset(&m, 0, sizeof(m));
	argv_init(&m.includes);
	m.out = out;
	m.ext_props = props;
	migrate_scan_text(&m.sc, text, len);
	const struct scan *sc = &m.sc;
	int has_attr = 0, has_loc = 0, has_culoc = 0, has_prop = 0, has_identity = 0, has_tex = 0;
	unsigned char *done = XCNEWVEC(unsigned char, sc->n + 1);
	texref_pass(&m, done);
	for (size_t i = 0; i < sc->n; i++) {
		const struct tok *t = &sc->v[i];
		if (done[i])
			continue;
		if (t->c == 'h' && known && !t->old_side) {
			char *h = migrate_scan_bytes(sc, t->b, t->e);
			known_use(&m, i, h, known);
			free(h);
			continue;
		}
		if (t->c != 'i' || t->old_side)
			continue;
		char *name = migrate_scan_name(sc, t);
		has_attr |= !strcmp(name, "nvshim_migrate_attr");
		has_loc |= !strcmp(name, "nvshim_migrate_location");
		has_culoc |= !strcmp(name, "nvshim_migrate_culocation");
		has_prop |= !strcmp(name, "nvshim_migrate_prop_attr");
		has_identity |= !strcmp(name, "nvshim_migrate_identity");
		has_tex |= !strcmp(name, "nvshim_migrate_bind_texture");
		/* x.clockRate: the token is the field alone. */
		const struct recipe *r = NULL;
		if (i > 0 && (sc->v[i - 1].c == '.' || sc->v[i - 1].c == 'A')) {
			char *f = concat("cudaDeviceProp::", name, NULL);
			r = recipe_find(f);
			free(f);
			if (r)
				do_field(&m, i, r, r->name);
			else if (known)
				known_use(&m, i, name, known);
			free(name);
			continue;
		}
		r = recipe_find(name);
		if (!r && known)
			known_use(&m, i, name, known);
		/* A member access (x.cuCtxCreate) or a declaration's own name is not a use. */
		if (r) {
			switch (r->kind) {
			case K_RENAME: do_rename(&m, i, r, name); break;
			case K_ARGS:
			case K_LOCATION: do_args(&m, i, r, name); break;
			case K_MACRO: do_macro(&m, i, r, name); break;
			case K_BASE: do_base(&m, i, r, name); break;
			case K_VALUE: do_value(&m, i, r, name); break;
			case K_TARGS: do_targs(&m, i, r, name); break;
			case K_IDENTITY: do_identity(&m, i, r, name); break;
			case K_FIELD: break;
			}
		}
		free(name);
	}
	free(done);
	/* The messages in line order (the texture references' were said first). */
	for (size_t k = 1; k < out->skipped.n; k++) {
		char *x = out->skipped.v[k];
		size_t j = k;
		while (j > 0 && strtoul(out->skipped.v[j - 1], NULL, 10) > strtoul(x, NULL, 10)) {
			out->skipped.v[j] = out->skipped.v[j - 1];
			j--;
		}
		out->skipped.v[j] = x;
	}
	out->changes = m.uses;
	if (!m.n) {
		out->text = xmemdup(text, len, len + 1);
		out->len = len;
		migrate_scan_release(&m.sc);
		argv_release(&m.includes);
		memo_release(&m);
		return;
	}
	qsort(m.v, m.n, sizeof(m.v[0]), edit_cmp);
	/* Regions of whole lines: the lines an edit touches, joined when they overlap; a region is
	 * guarded when one of its edits is. */
	struct strbuf b = STRBUF_INIT;
	size_t pos = 0; /* bytes copied */
	/* The helpers, after the leading #includes (or at the top). */
	size_t helper_at = sc->last_include_end;
	/* Headers the rewrites need and the file does not include. */
	for (size_t k = 0; k < m.includes.n;) {
		int have = 0;
		for (size_t j = 0; j < sc->n && !have; j++)
			have = sc->v[j].c == 'h' && sc->v[j].e - sc->v[j].b == strlen(m.includes.v[k]) &&
			       !memcmp(sc->s + sc->v[j].b, m.includes.v[k], strlen(m.includes.v[k]));
		if (have) {
			free(m.includes.v[k]);
			memmove(&m.includes.v[k], &m.includes.v[k + 1], (m.includes.n - k - 1) * sizeof(char *));
			m.includes.n--;
		} else {
			k++;
		}
	}
	int add_prop = m.need_prop && !has_prop, add_identity = m.need_identity && !has_identity;
	int add_tex = m.need_tex && !has_tex;
	if ((m.need_attr && !has_attr) || ((m.need_loc & 1) && !has_loc) || ((m.need_loc & 2) && !has_culoc) ||
	    m.includes.n || add_prop || add_identity || add_tex) {
		if (m.v[0].b < helper_at)
			helper_at = sc->line_start[migrate_scan_line(sc, m.v[0].b) - 1];
		strbuf_add(&b, text, helper_at);
		pos = helper_at;
		if (helper_at && text[helper_at - 1] != '\n')
			strbuf_addstr(&b, "\n");
		for (size_t k = 0; k < m.includes.n; k++) {
			char *inc = xasprintf("#include <%s> /* nvshim migrate */\n", m.includes.v[k]);
			strbuf_addstr(&b, inc);
			free(inc);
		}
		if (m.need_attr && !has_attr)
			strbuf_addstr(&b, migrate_attr_helper);
		if ((m.need_loc & 1) && !has_loc)
			strbuf_addstr(&b, migrate_loc_helper);
		if ((m.need_loc & 2) && !has_culoc)
			strbuf_addstr(&b, migrate_culoc_helper);
		if (add_prop)
			strbuf_addstr(&b, migrate_prop_helper);
		if (add_identity)
			strbuf_addstr(&b, migrate_identity_helper);
		if (add_tex)
			strbuf_addstr(&b, migrate_tex_helper);
	}
	for (size_t k = 0; k < m.n;) {
		unsigned l0 = migrate_scan_line(sc, m.v[k].b), l1 = migrate_scan_line(sc, m.v[k].e ? m.v[k].e - (m.v[k].e > m.v[k].b) : 0);
		size_t k1 = k + 1;
		enum guard g = m.v[k].guard;
		unsigned gmask = g ? 1u << g : 0;
		for (;;) {
			while (k1 < m.n && migrate_scan_line(sc, m.v[k1].b) <= l1) {
				unsigned e1 = migrate_scan_line(sc, m.v[k1].e > m.v[k1].b ? m.v[k1].e - 1 : m.v[k1].e);
				if (e1 > l1)
					l1 = e1;
				if (m.v[k1].guard)
					gmask |= 1u << m.v[k1].guard;
				k1++;
			}
			break;
		}
		size_t from = sc->line_start[l0 - 1];
		size_t to = l1 < sc->nlines ? sc->line_start[l1] : len;
		if (from < pos)
			from = pos;
		strbuf_add(&b, text + pos, from - pos);
		if (!gmask) {
			apply_lines(&b, &m, from, to, k, k1, 0);
		} else {
			strbuf_addstr(&b, "#if ");
			int first = 1;
			for (int gi = 1; gi < G_COUNT; gi++)
				if (gmask & (1u << gi)) {
					if (!first)
						strbuf_addstr(&b, " && ");
					strbuf_addstr(&b, guard_cond[gi]);
					first = 0;
				}
			strbuf_addstr(&b, " /* nvshim migrate */\n");
			apply_lines(&b, &m, from, to, k, k1, 0);
			if (to == len && len && text[len - 1] != '\n')
				strbuf_addstr(&b, "\n");
			strbuf_addstr(&b, "#else\n");
			apply_lines(&b, &m, from, to, k, k1, 1);
			if (to == len && len && text[len - 1] != '\n')
				strbuf_addstr(&b, "\n");
			strbuf_addstr(&b, "#endif");
			strbuf_addstr(&b, to == len && len && text[len - 1] != '\n' ? "" : "\n");
		}
		pos = to;
		k = k1;
	}
	strbuf_add(&b, text + pos, len - pos);
	out->text = b.s;
	out->len = b.n;
	for (size_t k = 0; k < m.n; k++)
		free(m.v[k].text);
	free(m.v);
	migrate_scan_release(&m.sc);
	argv_release(&m.includes);
	memo_release(&m);
}
