/* rtc: NVRTC options and logs, read the way the preload library's rules need them.
 *
 * Pure functions on plain data (no NVRTC is called), so the rules can be tested without a
 * toolkit. The preload library (preload.h) applies them in nvrtcCompileProgram and when a
 * JIT link fails.
 *
 * NVRTC spells its options -name=value or --long-name=value, and also takes the value of
 * -arch and -I as the next element ("-arch" "compute_90"). When -arch is repeated the last
 * one wins (with a warning in the log). With no -arch, NVRTC compiles for its oldest supported
 * virtual target (compute_75 on 13.0, compute_52 on 11.x/12.x).
 *
 * Log shapes (FACTS.md), matched on NVRTC's and ptxas's own text, never on nvshim's:
 *   a header that is not found:
 *     catastrophic error: cannot open source file "cuda/std/type_traits"
 *     catastrophic error: could not open source file "mma.h" (no directories in search list)
 *   a failure because the target is too old:
 *     error: incomplete type "nvcuda::wmma::fragment<...>" is not allowed
 *     ptxas error   : Feature 'cp.async' requires .target sm_80 or higher
 *     #error / static assertion failed, when the message names an architecture
 *   a failure that needs an arch-specific (a) target:
 *     ptxas error   : Instruction 'wgmma.fence' not supported on .target 'sm_90'
 */
#ifndef NVSHIM_RTC_H
#define NVSHIM_RTC_H

#include <stddef.h>

#include "model/arch.h"
#include "base/argv.h"

/* What a compile's options say. Indices are into the options as given. */
struct rtc_options {
	int arch_index;     /* element of the last -arch option, -1 when there is none */
	int arch_split;     /* its value is the next element */
	int narch;          /* arch options given */
	const char *arch_value; /* the last -arch value, NULL when none (or it is missing) */
	struct arch arch;   /* arch_value parsed; valid when arch_parsed */
	int arch_parsed;
	int relocatable;    /* -rdc=true, --device-c, -dc, -dlto and friends: code left for a link */
};

void rtc_options_scan(struct rtc_options *o, int n, const char *const *opts);

/* 1 if dir is given as an include path (-I<dir>, -I <dir>, --include-path=<dir>). */
int rtc_options_has_include(int n, const char *const *opts, const char *dir);

/* out = opts with every -arch option removed and "-arch=<arch>" where the first one stood
 * (at the end when there was none). */
void rtc_options_with_arch(struct argv *out, int n, const char *const *opts, const char *arch);

/* out = opts for a whole-program compile to SASS for sm_<cc>: the arch replaced by
 * -arch=sm_<cc> and every option that leaves code relocatable (-rdc=true, -dc, -dlto, -ewp)
 * removed, so that ptxas runs and checks the kernels' resources. */
void rtc_options_for_sass(struct argv *out, int n, const char *const *opts, unsigned cc);

/* The nearest of NVRTC's supported archs (ascending numbers, as nvrtcGetSupportedArchs gives
 * them) to num: the highest when num is above it, the lowest when below. num itself when
 * supported or when the list is empty. */
unsigned rtc_clamp(unsigned num, const int *supported, size_t n);
/* 1 if num is in the list. */
int rtc_supported(unsigned num, const int *supported, size_t n);

/* The header in the first "cannot open source file" error of a log (xmalloc'ed), or NULL. */
char *rtc_log_missing_header(const char *log);

enum rtc_arch_need {
	RTC_NEED_NONE,
	RTC_NEED_NEWER,    /* the code needs a newer target; `min` when the log says which */
	RTC_NEED_SPECIFIC, /* the code needs an arch-specific target (sm_NNa) */
};

struct rtc_arch_failure {
	enum rtc_arch_need need;
	unsigned min;   /* RTC_NEED_NEWER: the lowest target that works, 0 if unknown */
	char *line;     /* the log line that says so (xmalloc'ed), NULL with RTC_NEED_NONE */
};

/* Reads a failed compile's log for an error that a newer or arch-specific target cures. */
void rtc_log_arch_failure(const char *log, struct rtc_arch_failure *f);
void rtc_arch_failure_release(struct rtc_arch_failure *f);

/* 1 if a JIT linker's error log says nothing useful: empty, or only generic lines such as
 * "ERROR 9: finish" or "device kernel image is invalid". */
int rtc_log_vague(const char *log);

/* The lines of a log worth showing (errors and warnings of the compiler and ptxas), one
 * "\n"-terminated line each (xmalloc'ed; "" when none). */
char *rtc_log_messages(const char *log);

#endif
