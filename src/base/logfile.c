#include "base/logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/diag.h"
#include "base/fault.h"

/* A growing line: doubling, so that a line of 100,000 arguments costs a few copies, not one per
 * byte (realloc under a sanitizer always copies). */
struct out {
	char *buf;
	size_t len, cap;
};

static void add(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 64;
		while (cap < o->len + n + 1)
			cap *= 2;
		o->buf = XRESIZEVEC(char, o->buf, cap);
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void adds(struct out *o, const char *s) { add(o, s, strlen(s)); }

static void add_json(struct out *o, const char *s)
{
	add(o, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8];
		switch (*p) {
		case '"': adds(o, "\\\""); break;
		case '\\': adds(o, "\\\\"); break;
		case '\n': adds(o, "\\n"); break;
		case '\t': adds(o, "\\t"); break;
		case '\r': adds(o, "\\r"); break;
		default:
			if (*p < 0x20) {
				snprintf(esc, sizeof(esc), "\\u%04x", *p);
				adds(o, esc);
			} else {
				add(o, (const char *)p, 1);
			}
		}
	}
	add(o, "\"", 1);
}

void logfile_json_string(char **buf, size_t *len, const char *s)
{
	/* the caller's buffer holds *len bytes and a NUL: no more is assumed */
	struct out o = { *buf, *len, *buf ? *len + 1 : 0 };
	add_json(&o, s);
	*buf = o.buf;
	*len = o.len;
}

static void add_array(struct out *o, const char *key, const struct argv *a, size_t from)
{
	adds(o, ",\"");
	adds(o, key);
	adds(o, "\":[");
	for (size_t i = from; a && i < a->n; i++) {
		if (i > from)
			adds(o, ",");
		add_json(o, a->v[i]);
	}
	adds(o, "]");
}

long logfile_peak_kb(void)
{
	/* VmHWM is the peak of this process image only: unlike ru_maxrss it does not carry over
	 * the size of whatever process exec'd nvshim. */
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

int logfile_write(const char *path, const struct logfile_entry *e)
{
	struct out o = { NULL, 0, 0 };
	char tbuf[64], num[128];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	adds(&o, "{\"time\":\"");
	adds(&o, tbuf);
	snprintf(num, sizeof(num), "\",\"pid\":%ld,\"cwd\":", (long)getpid());
	adds(&o, num);
	char *cwd = getcwd(NULL, 0);
	add_json(&o, cwd ? cwd : "");
	free(cwd);
	adds(&o, ",\"tool\":");
	add_json(&o, e->tool ? e->tool : "");
	add_array(&o, "argv_in", e->argv_in, 0);
	add_array(&o, "argv_out", e->argv_out, 0);
	add_array(&o, "notes", e->notes, 0);
	if (e->stages)
		add_array(&o, "memory_stages", e->stages, 0);
	long maxrss = logfile_peak_kb();
	snprintf(num, sizeof(num), ",\"status\":%d,\"wall_ms\":%.3f,\"maxrss_kb\":%ld,\"build\":", e->status,
		 e->wall_ms, maxrss);
	adds(&o, num);
	if (e->build)
		add_json(&o, e->build);
	else
		adds(&o, "null");
	snprintf(num, sizeof(num), ",\"notes_quieted\":%lu}\n", e->quieted);
	adds(&o, num);

	int rc = 0;
	int fault = fault_inject("logfile");
	int fd = fault ? -1 : open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, o.buf, o.len) != (ssize_t)o.len) {
		warning("cannot write the log file '%s': %s", path,
			fault ? "injected fault (NVSHIM_FAULT)" : strerror(errno));
		rc = -1;
	}
	if (fd >= 0)
		close(fd);
	free(o.buf);
	return rc;
}
