#include "machine/devices.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>

#include <libiberty.h>

#include "base/cache.h"
#include "base/diag.h"
#include "base/fault.h"
#include "base/runner.h"
#include "buildwide/stats.h"

void devices_init(struct devices *d) { memset(d, 0, sizeof(*d)); }

void devices_release(struct devices *d)
{
	free(d->source);
	devices_init(d);
}

static int parse_cc(const char *s, size_t len, unsigned *cc)
{
	char buf[32];
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	const char *p = buf;
	if (!strncmp(p, "sm_", 3) || !strncmp(p, "compute_", 8))
		p = strchr(p, '_') + 1;
	unsigned major = 0, minor = 0;
	char *end;
	if (!isdigit((unsigned char)*p))
		return -1;
	major = (unsigned)strtoul(p, &end, 10);
	if (*end == '.') {
		minor = (unsigned)strtoul(end + 1, &end, 10);
		major = major * 10 + minor;
	}
	if (*end && !(end[0] == 'a' && !end[1]))
		return -1;
	if (major < 10 || major > 999)
		return -1;
	*cc = major;
	return 0;
}

int devices_parse(struct devices *d, const char *text, const char **why)
{
	d->n = 0;
	*why = NULL;
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, ", ");
		if (len) {
			unsigned cc;
			if (parse_cc(p, len, &cc)) {
				*why = "expected compute capabilities such as 90,80 or sm_90 or 9.0";
				d->n = 0;
				return -1;
			}
			if (d->n < DEVICES_MAX) {
				d->v[d->n].cc = cc;
				d->v[d->n].uuid[0] = '\0';
				d->n++;
			}
		}
		p += len;
		p += strspn(p, ", ");
	}
	return 0;
}

void devices_select(struct devices *d, const char *visible)
{
	if (!visible)
		return;
	struct device all[DEVICES_MAX];
	size_t n = d->n;
	memcpy(all, d->v, sizeof(all));
	d->n = 0;
	for (const char *p = visible; *p;) {
		size_t len = strcspn(p, ",");
		char *item = xstrndup(p, len);
		char *s = item;
		while (isspace((unsigned char)*s))
			s++;
		int found = -1;
		if (isdigit((unsigned char)*s) || *s == '-') {
			char *end;
			long idx = strtol(s, &end, 10);
			if (!*end && idx >= 0 && (size_t)idx < n)
				found = (int)idx;
		} else if (*s) {
			/* A UUID, or an unambiguous prefix of one; the "GPU-" may be left out. */
			for (size_t i = 0; i < n; i++) {
				const char *u = all[i].uuid;
				if (!strncmp(u, s, strlen(s)) ||
				    (!strncmp(u, "GPU-", 4) && !strncmp(u + 4, s, strlen(s)))) {
					found = found == -1 ? (int)i : -2;
				}
			}
		}
		free(item);
		/* CUDA stops at the first entry that selects nothing. */
		if (found < 0)
			break;
		if (d->n < DEVICES_MAX)
			d->v[d->n++] = all[found];
		p += len;
		if (*p == ',')
			p++;
	}
}

/* What the cached devices depend on: the loaded driver and where its libraries are searched. */
static char *driver_key(config_getenv_fn env)
{
	char *version = NULL;
	FILE *f = fopen("/proc/driver/nvidia/version", "r");
	if (f) {
		char line[512];
		if (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			version = xstrdup(line);
		}
		fclose(f);
	}
	const char *ld = env("LD_LIBRARY_PATH");
	char *key = xasprintf("driver=%s ld=%s", version ? version : "none", ld ? ld : "");
	free(version);
	return key;
}

static int parse_listing(struct devices *d, const char *text, const char *want_key, char **source)
{
	int have_key = !want_key, have_end = 0;
	char *copy = xstrdup(text);
	d->n = 0;
	for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "key ", 4))
			have_key = want_key && !strcmp(line + 4, want_key);
		else if (!strncmp(line, "source ", 7)) {
			free(*source);
			*source = xstrdup(line + 7);
		} else if (!strncmp(line, "device ", 7) && d->n < DEVICES_MAX) {
			unsigned cc;
			char uuid[64] = "";
			if (sscanf(line + 7, "%u %63s", &cc, uuid) >= 1) {
				d->v[d->n].cc = cc;
				snprintf(d->v[d->n].uuid, sizeof(d->v[d->n].uuid), "%s", uuid);
				d->n++;
			}
		} else if (!strcmp(line, "end"))
			have_end = 1;
	}
	free(copy);
	return have_key && have_end ? 0 : -1;
}

/* The lock beside the cache file, held with flock(); -1 when it cannot be had (then each
 * compile asks for itself, as before). */
static int devices_lock(const char *cache_dir)
{
	if (cache_mkdirs(cache_dir))
		return -1;
	char *path = concat(cache_dir, "/devices.lock", NULL);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(path);
	if (fd >= 0) {
		while (flock(fd, LOCK_EX) && errno == EINTR)
			;
	}
	return fd;
}

static void devices_unlock(int fd)
{
	if (fd >= 0) {
		flock(fd, LOCK_UN);
		close(fd);
	}
}

/* The cache's listing, if it is whole and for this driver: 1 with d filled (*text and *source
 * its, d->source said); 0 with none of them set. */
static int from_cache(struct devices *d, const char *path, const char *key, char **text, char **source)
{
	*text = path ? cache_read(path) : NULL;
	if (*text && !parse_listing(d, *text, key, source)) {
		stats_count_hit();
		d->source = concat("cache ", path, " (", *source ? *source : "?", ")", NULL);
		return 1;
	}
	free(*text);
	*text = NULL;
	free(*source);
	*source = NULL;
	d->n = 0;
	return 0;
}

void devices_load(struct devices *d, config_getenv_fn env, const char *cache_dir, const char *helper)
{
	devices_release(d);
	const char *override = env("NVSHIM_DEVICES");
	if (override) {
		const char *why;
		if (devices_parse(d, override, &why))
			warning("NVSHIM_DEVICES='%s': %s; using no GPU", override, why);
		d->source = xstrdup("NVSHIM_DEVICES");
		return;
	}
	if (fault_inject("devices")) {
		warning("cannot list the GPUs: injected fault (NVSHIM_FAULT); assuming none");
		d->source = xstrdup("none (injected fault)");
		return;
	}
	char *key = driver_key(env);
	char *path = cache_dir && *cache_dir ? concat(cache_dir, "/devices", NULL) : NULL;
	char *source = NULL;
	int detected = 0;
	char *text = NULL;
	if (from_cache(d, path, key, &text, &source))
		goto select;
	/* One detector at a time per cache: the compiles of a build that start together on a cold
	 * cache wait for the first one's answer instead of all asking the driver at once. */
	int lock = path ? devices_lock(cache_dir) : -1;
	if (lock >= 0 && from_cache(d, path, key, &text, &source)) {
		devices_unlock(lock);
		goto select;
	}
	if (helper && access(helper, X_OK) == 0) {
		struct argv args = ARGV_INIT;
		argv_push(&args, helper);
		int rc = runner_capture(helper, &args, &text);
		argv_release(&args);
		if (rc == 0 && text && !parse_listing(d, text, NULL, &source)) {
			d->source = concat("nvshim-devices (", source ? source : "?", ")", NULL);
			detected = 1;
		} else {
			warning("%s did not list the GPUs; assuming none", helper);
			d->n = 0;
		}
	} else {
		source = xstrdup("no detector");
	}
	if (!d->source)
		d->source = xstrdup(source ? source : "none");
	/* Only a detector's answer is worth keeping. */
	if (path && detected) {
		char *listing = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&listing, &len);
		fprintf(m, "key %s\nsource %s\n", key, source ? source : "none");
		for (size_t i = 0; i < d->n; i++)
			fprintf(m, "device %u %s\n", d->v[i].cc, d->v[i].uuid);
		fprintf(m, "end\n");
		fclose(m);
		if (cache_write(cache_dir, path, listing))
			diag_debug("cannot write the device cache %s: %s", path, strerror(errno));
		free(listing);
	}
	devices_unlock(lock);
select:
	devices_select(d, env("CUDA_VISIBLE_DEVICES"));
	free(text);
	free(source);
	free(key);
	free(path);
}
