#include "nvshim/logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libiberty.h>

#include "nvshim/diag.h"
#include "nvshim/fault.h"

static void add(char **buf, size_t *len, const char *s, size_t n)
{
	*buf = XRESIZEVEC(char, *buf, *len + n + 1);
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
}

static void adds(char **buf, size_t *len, const char *s) { add(buf, len, s, strlen(s)); }

void logfile_json_string(char **buf, size_t *len, const char *s)
{
	add(buf, len, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8];
		switch (*p) {
		case '"': adds(buf, len, "\\\""); break;
		case '\\': adds(buf, len, "\\\\"); break;
		case '\n': adds(buf, len, "\\n"); break;
		case '\t': adds(buf, len, "\\t"); break;
		case '\r': adds(buf, len, "\\r"); break;
		default:
			if (*p < 0x20) {
				snprintf(esc, sizeof(esc), "\\u%04x", *p);
				adds(buf, len, esc);
			} else {
				add(buf, len, (const char *)p, 1);
			}
		}
	}
	add(buf, len, "\"", 1);
}

static void add_array(char **buf, size_t *len, const char *key, const struct argv *a, size_t from)
{
	adds(buf, len, ",\"");
	adds(buf, len, key);
	adds(buf, len, "\":[");
	for (size_t i = from; a && i < a->n; i++) {
		if (i > from)
			adds(buf, len, ",");
		logfile_json_string(buf, len, a->v[i]);
	}
	adds(buf, len, "]");
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
	char *buf = NULL, tbuf[64], num[128];
	size_t len = 0;
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	adds(&buf, &len, "{\"time\":\"");
	adds(&buf, &len, tbuf);
	snprintf(num, sizeof(num), "\",\"pid\":%ld,\"cwd\":", (long)getpid());
	adds(&buf, &len, num);
	char *cwd = getcwd(NULL, 0);
	logfile_json_string(&buf, &len, cwd ? cwd : "");
	free(cwd);
	adds(&buf, &len, ",\"tool\":");
	logfile_json_string(&buf, &len, e->tool ? e->tool : "");
	add_array(&buf, &len, "argv_in", e->argv_in, 0);
	add_array(&buf, &len, "argv_out", e->argv_out, 0);
	add_array(&buf, &len, "notes", e->notes, 0);
	long maxrss = logfile_peak_kb();
	snprintf(num, sizeof(num), ",\"status\":%d,\"wall_ms\":%.3f,\"maxrss_kb\":%ld}\n", e->status,
		 e->wall_ms, maxrss);
	adds(&buf, &len, num);

	int rc = 0;
	int fault = fault_inject("logfile");
	int fd = fault ? -1 : open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len) {
		warning("cannot write the log file '%s': %s", path,
			fault ? "injected fault (NVSHIM_FAULT)" : strerror(errno));
		rc = -1;
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}
