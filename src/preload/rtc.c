#include "preload/rtc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libiberty.h>

/* The value of an -arch element ("-arch=X"), the empty string when the value is the next
 * element ("-arch"), NULL when it is not an arch option. */
static const char *arch_value_of(const char *opt)
{
	static const char *const names[] = { "-arch", "--gpu-architecture" };
	for (size_t i = 0; i < 2; i++) {
		size_t len = strlen(names[i]);
		if (strncmp(opt, names[i], len))
			continue;
		if (opt[len] == '\0')
			return "";
		if (opt[len] == '=')
			return opt + len + 1;
	}
	return NULL;
}

static int is_relocatable(const char *opt)
{
	static const char *const names[] = {
		"-rdc=true", "--relocatable-device-code=true", "-dc", "--device-c", "-dlto",
		"--dlink-time-opt", "-ewp", "--extensible-whole-program", "-gen-opt-lto", "--gen-opt-lto",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(opt, names[i]))
			return 1;
	return 0;
}

void rtc_options_scan(struct rtc_options *o, int n, const char *const *opts)
{
	memset(o, 0, sizeof(*o));
	o->arch_index = -1;
	for (int i = 0; i < n; i++) {
		const char *opt = opts[i];
		if (!opt)
			continue;
		const char *v = arch_value_of(opt);
		if (v) {
			o->narch++;
			o->arch_index = i;
			o->arch_split = !*v;
			if (!*v) {
				v = i + 1 < n ? opts[i + 1] : NULL;
				i++;
			}
			o->arch_value = v;
			o->arch_parsed = v && !arch_parse(v, &o->arch);
			continue;
		}
		if (is_relocatable(opt))
			o->relocatable = 1;
		else if (!strcmp(opt, "-rdc=false") || !strcmp(opt, "--relocatable-device-code=false") ||
			 !strcmp(opt, "-dw") || !strcmp(opt, "--device-w"))
			o->relocatable = 0;
	}
}

static int same_dir(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	while (la > 1 && a[la - 1] == '/')
		la--;
	while (lb > 1 && b[lb - 1] == '/')
		lb--;
	return la == lb && !strncmp(a, b, la);
}

int rtc_options_has_include(int n, const char *const *opts, const char *dir)
{
	for (int i = 0; i < n; i++) {
		const char *opt = opts[i], *v = NULL;
		if (!opt)
			continue;
		if (!strcmp(opt, "-I") || !strcmp(opt, "--include-path"))
			v = i + 1 < n ? opts[++i] : NULL;
		else if (!strncmp(opt, "--include-path=", 15))
			v = opt + 15;
		else if (!strncmp(opt, "-I", 2))
			v = opt + 2;
		if (v && same_dir(v, dir))
			return 1;
	}
	return 0;
}

void rtc_options_with_arch(struct argv *out, int n, const char *const *opts, const char *arch)
{
	int placed = 0;
	for (int i = 0; i < n; i++) {
		const char *opt = opts[i];
		if (!opt)
			continue;
		const char *v = arch_value_of(opt);
		if (v) {
			if (!*v)
				i++;
			if (!placed)
				argv_pushf(out, "-arch=%s", arch);
			placed = 1;
			continue;
		}
		argv_push(out, opt);
	}
	if (!placed)
		argv_pushf(out, "-arch=%s", arch);
}

void rtc_options_for_sass(struct argv *out, int n, const char *const *opts, unsigned cc)
{
	struct argv kept = ARGV_INIT;
	for (int i = 0; i < n; i++)
		if (opts[i] && !is_relocatable(opts[i]))
			argv_push(&kept, opts[i]);
	char arch[32];
	snprintf(arch, sizeof(arch), "sm_%u", cc);
	rtc_options_with_arch(out, (int)kept.n, (const char *const *)kept.v, arch);
	argv_release(&kept);
}

unsigned rtc_clamp(unsigned num, const int *supported, size_t n)
{
	if (!n || rtc_supported(num, supported, n))
		return num;
	unsigned lo = (unsigned)supported[0], hi = (unsigned)supported[0];
	for (size_t i = 1; i < n; i++) {
		if ((unsigned)supported[i] < lo)
			lo = (unsigned)supported[i];
		if ((unsigned)supported[i] > hi)
			hi = (unsigned)supported[i];
	}
	if (num > hi)
		return hi;
	if (num < lo)
		return lo;
	/* Inside the range but not listed (sm_85): the highest supported one below it. */
	unsigned best = lo;
	for (size_t i = 0; i < n; i++)
		if ((unsigned)supported[i] <= num && (unsigned)supported[i] > best)
			best = (unsigned)supported[i];
	return best;
}

int rtc_supported(unsigned num, const int *supported, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned)supported[i] == num)
			return 1;
	return 0;
}

char *rtc_log_missing_header(const char *log)
{
	static const char *const shapes[] = { "cannot open source file \"", "could not open source file \"" };
	const char *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; log && i < 2; i++) {
		const char *p = strstr(log, shapes[i]);
		if (p && (!best || p < best)) {
			best = p;
			best_len = strlen(shapes[i]);
		}
	}
	if (!best)
		return NULL;
	const char *start = best + best_len, *end = strchr(start, '"');
	if (!end || end == start || memchr(start, '\n', (size_t)(end - start)))
		return NULL;
	return xstrndup(start, (size_t)(end - start));
}

static const char *find_ci(const char *hay, size_t len, const char *needle)
{
	size_t nl = strlen(needle);
	for (size_t i = 0; i + nl <= len; i++)
		if (!strncasecmp(hay + i, needle, nl))
			return hay + i;
	return NULL;
}

/* Does a #error or static_assert message name an architecture? */
static int names_arch(const char *line, size_t len)
{
	static const char *const words[] = { "sm_", "compute_", "__CUDA_ARCH", "compute capability", "arch" };
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (find_ci(line, len, words[i]))
			return 1;
	return 0;
}

void rtc_log_arch_failure(const char *log, struct rtc_arch_failure *f)
{
	memset(f, 0, sizeof(*f));
	for (const char *line = log; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *p;
		enum rtc_arch_need need = RTC_NEED_NONE;
		unsigned min = 0;
		if (find_ci(line, len, "incomplete type \"nvcuda::wmma::fragment<")) {
			need = RTC_NEED_NEWER;
		} else if ((p = find_ci(line, len, "requires .target sm_"))) {
			need = RTC_NEED_NEWER;
			min = (unsigned)strtoul(p + strlen("requires .target sm_"), NULL, 10);
		} else if (find_ci(line, len, "not supported on .target 'sm_")) {
			need = RTC_NEED_SPECIFIC;
		} else if ((find_ci(line, len, "#error") || find_ci(line, len, "static assertion failed")) &&
			   find_ci(line, len, "error") && names_arch(line, len)) {
			need = RTC_NEED_NEWER;
		}
		if (need != RTC_NEED_NONE) {
			f->need = need;
			f->min = min;
			f->line = xstrndup(line, len);
			return;
		}
		line = nl ? nl + 1 : NULL;
	}
}

void rtc_arch_failure_release(struct rtc_arch_failure *f)
{
	free(f->line);
	memset(f, 0, sizeof(*f));
}

static int generic_line(const char *line, size_t len)
{
	/* nvJitLink's closing line: "ERROR 9: finish". */
	if (len > 6 && !strncmp(line, "ERROR ", 6) && isdigit((unsigned char)line[6])) {
		const char *colon = memchr(line, ':', len);
		if (colon && find_ci(colon, len - (size_t)(colon - line), "finish"))
			return 1;
	}
	return find_ci(line, len, "device kernel image is invalid") != NULL ||
	       find_ci(line, len, "linker error") != NULL;
}

int rtc_log_vague(const char *log)
{
	for (const char *line = log; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if ((find_ci(line, len, "error") || find_ci(line, len, "fatal")) && !generic_line(line, len))
			return 0;
		line = nl ? nl + 1 : NULL;
	}
	return 1;
}

char *rtc_log_messages(const char *log)
{
	size_t cap = (log ? strlen(log) : 0) + 1, used = 0;
	char *out = XNEWVEC(char, cap);
	out[0] = '\0';
	for (const char *line = log; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
			len--;
		if (len && (find_ci(line, len, "error") || find_ci(line, len, "warning") ||
			    find_ci(line, len, "fatal"))) {
			if (used + len + 2 > cap) {
				cap = used + len + 2;
				out = XRESIZEVEC(char, out, cap);
			}
			memcpy(out + used, line, len);
			used += len;
			out[used++] = '\n';
			out[used] = '\0';
		}
		line = nl ? nl + 1 : NULL;
	}
	return out;
}
