#include "base/diag.h"

#include <stdio.h>
#include <stdlib.h>

static enum verbosity verbosity = VERBOSITY_NORMAL;
static int strict;
static int strict_errors;
static int warnings;
static FILE *stream;

void diag_set_verbosity(enum verbosity v) { verbosity = v; }
enum verbosity diag_verbosity(void) { return verbosity; }
void diag_set_strict(int s) { strict = s; }
void diag_set_stream(FILE *f) { stream = f; }
int diag_strict_errors(void) { return strict_errors; }
int diag_warnings(void) { return warnings; }

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	FILE *out = stream ? stream : stderr;
	char buf[4096];

	/* One write per message, so that parallel builds do not interleave halves. */
	int n = snprintf(buf, sizeof(buf), "nvshim %s : ", prefix);
	if (n < 0)
		return;
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return;
	size_t len = (size_t)n + (size_t)m;
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	fwrite(buf, 1, len, out);
	fflush(out);
}

void warning(const char *fmt, ...)
{
	va_list ap;
	warnings++;
	if (strict)
		strict_errors++;
	else if (verbosity == VERBOSITY_QUIET)
		return;
	va_start(ap, fmt);
	vreport(strict ? "error  " : "warning", fmt, ap);
	va_end(ap);
}

void diag_rewrite(const char *fmt, ...)
{
	va_list ap;
	if (verbosity == VERBOSITY_QUIET)
		return;
	va_start(ap, fmt);
	vreport("warning", fmt, ap);
	va_end(ap);
}

int error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error  ", fmt, ap);
	va_end(ap);
	return -1;
}

void fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("fatal  ", fmt, ap);
	va_end(ap);
	exit(1);
}

void diag_note(enum verbosity at, const char *fmt, ...)
{
	va_list ap;
	if (verbosity < at)
		return;
	va_start(ap, fmt);
	vreport(at >= VERBOSITY_DEBUG ? "debug  " : "info   ", fmt, ap);
	va_end(ap);
}

void diag_bug(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stream ? stream : stderr, "nvshim BUG     : %s:%d: %s\n", file, line, msg);
	abort();
}
