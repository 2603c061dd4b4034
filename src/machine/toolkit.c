#include "machine/toolkit.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/hash.h"
#include "base/cache.h"
#include "base/diag.h"
#include "base/fault.h"
#include "base/runner.h"
#include "buildwide/stats.h"

char *toolkit_parse_version(const char *banner)
{
	if (!strstr(banner, "Cuda compiler driver"))
		return NULL;
	const char *p = strstr(banner, ", V");
	if (!p)
		return NULL;
	p += 3;
	size_t len = strspn(p, "0123456789.");
	return len ? xstrndup(p, len) : NULL;
}

static char *capture(const char *nvcc, const char *option)
{
	struct argv args = ARGV_INIT;
	char *out = NULL;
	argv_push(&args, nvcc);
	argv_push(&args, option);
	int rc = runner_capture(nvcc, &args, &out);
	argv_release(&args);
	if (rc != 0) {
		free(out);
		return NULL;
	}
	return out;
}

char *toolkit_version(const char *nvcc)
{
	char *out = capture(nvcc, "--version");
	char *v = out ? toolkit_parse_version(out) : NULL;
	free(out);
	return v;
}

int toolkit_list(const char *nvcc, const char *option, struct argv *out)
{
	char *text = capture(nvcc, option);
	if (!text)
		return -1;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		while (isspace((unsigned char)*line))
			line++;
		size_t len = strcspn(line, " \t\r");
		if (len)
			argv_push_owned(out, xstrndup(line, len));
	}
	free(text);
	return 0;
}

void toolkit_parse_allowed(const char *help, struct argv *out)
{
	const char *sec = strncmp(help, "--gpu-code", 10) ? strstr(help, "\n--gpu-code") : help;
	if (!sec)
		return;
	const char *next = strstr(sec + 1, "\n--");
	const char *p = strstr(sec, "Allowed values");
	if (!p || (next && p > next))
		return;
	while ((p = strchr(p, '\'')) && (!next || p < next)) {
		const char *end = strchr(p + 1, '\'');
		if (!end)
			break;
		argv_push_owned(out, xstrndup(p + 1, (size_t)(end - p - 1)));
		p = end + 1;
	}
}

void toolkit_init(struct toolkit *tk)
{
	memset(tk, 0, sizeof(*tk));
	argv_init(&tk->targets);
}

void toolkit_release(struct toolkit *tk)
{
	free(tk->nvcc);
	free(tk->version);
	free(tk->source);
	argv_release(&tk->targets);
	toolkit_init(tk);
}

static void set_version(struct toolkit *tk, const char *v)
{
	free(tk->version);
	tk->version = xstrdup(v);
	tk->major = (unsigned)strtoul(v, NULL, 10);
	const char *dot = strchr(v, '.');
	tk->minor = dot ? (unsigned)strtoul(dot + 1, NULL, 10) : 0;
}


static char *cache_path(const char *cache_dir, const char *key)
{
	/* FNV-1a of the path part of the key names the file, so a new build of the same nvcc
	 * replaces its entry; the whole key inside the file is checked. */
	const char *end = strrchr(key, ' ');
	end = end ? end : key + strlen(key);
	const char *size = end;
	while (size > key && size[-1] != ' ')
		size--;
	unsigned long long h = hash_bytes(HASH_INIT, key, (size_t)(size - key));
	return xasprintf("%s/toolkit/nvcc-%016llx.facts", cache_dir, h);
}

static int read_cache(struct toolkit *tk, const char *path, const char *key)
{
	char *text = cache_read(path);
	if (!text)
		return -1;
	int have_key = 0, have_version = 0, have_end = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "key ", 4))
			have_key = !strcmp(line + 4, key);
		else if (!strncmp(line, "version ", 8) && have_key) {
			set_version(tk, line + 8);
			have_version = 1;
		} else if (!strncmp(line, "target ", 7) && have_key)
			argv_push(&tk->targets, line + 7);
		else if (!strcmp(line, "end"))
			have_end = 1;
	}
	free(text);
	if (have_key && have_version && have_end && tk->targets.n)
		return 0;
	argv_release(&tk->targets);
	return -1;
}

static void write_cache(const struct toolkit *tk, const char *cache_dir, const char *path,
			const char *key)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	fprintf(m, "key %s\nversion %s\n", key, tk->version);
	for (size_t i = 0; i < tk->targets.n; i++)
		fprintf(m, "target %s\n", tk->targets.v[i]);
	fprintf(m, "end\n");
	fclose(m);
	char *dir = concat(cache_dir, "/toolkit", NULL);
	if (cache_write(dir, path, text))
		warning("cannot write the toolkit cache %s: %s", path, strerror(errno));
	free(dir);
	free(text);
}

int toolkit_load(struct toolkit *tk, const char *nvcc, const char *cache_dir)
{
	toolkit_release(tk);
	tk->nvcc = xstrdup(nvcc);
	if (fault_inject("toolkit")) {
		warning("cannot read the version and targets of %s: injected fault (NVSHIM_FAULT)", nvcc);
		return -1;
	}
	char *key = cache_file_key(nvcc); /* its resolved path, size and modification time */
	char *path = key && cache_dir && *cache_dir ? cache_path(cache_dir, key) : NULL;
	if (path && !read_cache(tk, path, key)) {
		stats_count_hit();
		tk->source = concat("cache ", path, NULL);
		free(path);
		free(key);
		return 0;
	}
	char *v = toolkit_version(nvcc);
	char *help = capture(nvcc, "--help");
	if (help)
		toolkit_parse_allowed(help, &tk->targets);
	free(help);
	/* Older nvcc may list no allowed values: its --list-gpu-* output still names the plain
	 * targets. */
	if (!tk->targets.n) {
		toolkit_list(nvcc, "--list-gpu-code", &tk->targets);
		toolkit_list(nvcc, "--list-gpu-arch", &tk->targets);
	}
	int rc = 0;
	if (!v || !tk->targets.n) {
		warning("cannot read the version and targets of %s", nvcc);
		rc = -1;
	} else {
		set_version(tk, v);
		tk->source = xstrdup("nvcc");
		if (path)
			write_cache(tk, cache_dir, path, key);
	}
	free(v);
	free(path);
	free(key);
	return rc;
}

int toolkit_accepts(const struct toolkit *tk, const struct arch *a)
{
	char buf[32];
	arch_format(a, buf, sizeof(buf));
	for (size_t i = 0; i < tk->targets.n; i++)
		if (!strcmp(tk->targets.v[i], buf))
			return 1;
	return 0;
}

unsigned toolkit_renamed(const struct toolkit *tk, unsigned num)
{
	/* CUDA 13.0 renamed Thor's sm_101 to sm_110. */
	if (tk->major >= 13 && num == 101)
		return 110;
	return num;
}

char *toolkit_root(const char *nvcc)
{
	char *dir = xstrdup(nvcc);
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(dir, '/');
		if (!slash) {
			free(dir);
			return NULL;
		}
		*slash = '\0';
	}
	if (!*dir) {
		free(dir);
		return xstrdup("/");
	}
	return dir;
}
