/* nvshim compat: cuSPARSE 11's deprecated algorithm names that cuSPARSE 12 (CUDA 12.0) removed,
 * as the names of today's enumerators of the same value. In cuSPARSE 11.7 (nvidia-cusparse-cu11
 * 11.7.5.86's cusparse.h) each old enumerator had the value of its new name:
 *   cusparseSpMVAlg_t: CUSPARSE_MV_ALG_DEFAULT = CUSPARSE_SPMV_ALG_DEFAULT (0),
 *     CUSPARSE_COOMV_ALG = CUSPARSE_SPMV_COO_ALG1 (1), CUSPARSE_CSRMV_ALG1 = CUSPARSE_SPMV_CSR_ALG1 (2),
 *     CUSPARSE_CSRMV_ALG2 = CUSPARSE_SPMV_CSR_ALG2 (3);
 *   cusparseSpMMAlg_t: CUSPARSE_MM_ALG_DEFAULT = CUSPARSE_SPMM_ALG_DEFAULT (0),
 *     CUSPARSE_COOMM_ALG1, _ALG2, _ALG3 = CUSPARSE_SPMM_COO_ALG1, _ALG2, _ALG3 (1, 2, 3),
 *     CUSPARSE_CSRMM_ALG1 = CUSPARSE_SPMM_CSR_ALG1 (4).
 * So a call with an old name passes the value it passed on CUDA 11. Each is a macro only when the
 * name is not defined and cusparse.h is cuSPARSE 12 or newer (included first, for the enumerators).
 *
 * Force-included (-include) by nvshim only into the retry of a compile that failed on one of
 * these (config/api.ini: compat = cusparse.h).
 */
#ifndef NVSHIM_COMPAT_CUSPARSE_H
#define NVSHIM_COMPAT_CUSPARSE_H

#if defined(__has_include)
#if __has_include(<cusparse.h>)
#include <cusparse.h>
#if defined(CUSPARSE_VER_MAJOR) && CUSPARSE_VER_MAJOR >= 12
#ifndef CUSPARSE_MV_ALG_DEFAULT
#define CUSPARSE_MV_ALG_DEFAULT CUSPARSE_SPMV_ALG_DEFAULT
#endif
#ifndef CUSPARSE_COOMV_ALG
#define CUSPARSE_COOMV_ALG CUSPARSE_SPMV_COO_ALG1
#endif
#ifndef CUSPARSE_CSRMV_ALG1
#define CUSPARSE_CSRMV_ALG1 CUSPARSE_SPMV_CSR_ALG1
#endif
#ifndef CUSPARSE_CSRMV_ALG2
#define CUSPARSE_CSRMV_ALG2 CUSPARSE_SPMV_CSR_ALG2
#endif
#ifndef CUSPARSE_MM_ALG_DEFAULT
#define CUSPARSE_MM_ALG_DEFAULT CUSPARSE_SPMM_ALG_DEFAULT
#endif
#ifndef CUSPARSE_COOMM_ALG1
#define CUSPARSE_COOMM_ALG1 CUSPARSE_SPMM_COO_ALG1
#endif
#ifndef CUSPARSE_COOMM_ALG2
#define CUSPARSE_COOMM_ALG2 CUSPARSE_SPMM_COO_ALG2
#endif
#ifndef CUSPARSE_COOMM_ALG3
#define CUSPARSE_COOMM_ALG3 CUSPARSE_SPMM_COO_ALG3
#endif
#ifndef CUSPARSE_CSRMM_ALG1
#define CUSPARSE_CSRMM_ALG1 CUSPARSE_SPMM_CSR_ALG1
#endif
#endif /* CUSPARSE_VER_MAJOR >= 12 */
#endif /* __has_include(<cusparse.h>) */
#endif /* __has_include */

#endif /* NVSHIM_COMPAT_CUSPARSE_H */
