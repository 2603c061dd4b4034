#include "machine/steps.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

void steps_init(struct steps *s)
{
	s->v = NULL;
	s->n = s->alloc = 0;
	argv_init(&s->settings);
}

void steps_release(struct steps *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct step *t = &s->v[i];
		free(t->line);
		argv_release(&t->argv);
		free(t->stage);
		free(t->source);
		free(t->target);
	}
	free(s->v);
	argv_release(&s->settings);
	steps_init(s);
}

const char *steps_setting(const struct steps *s, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = s->settings.n; i-- > 0;)
		if (!strncmp(s->settings.v[i], name, len) && s->settings.v[i][len] == '=')
			return s->settings.v[i] + len + 1;
	return NULL;
}

struct buf {
	char *s;
	size_t n, alloc;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->alloc) {
		b->alloc = (b->n + n + 1) * 2;
		b->s = XRESIZEVEC(char, b->s, b->alloc);
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static const char *lookup(const struct argv *settings, const char *name, size_t len)
{
	for (size_t i = settings ? settings->n : 0; i-- > 0;)
		if (!strncmp(settings->v[i], name, len) && settings->v[i][len] == '=')
			return settings->v[i] + len + 1;
	return NULL;
}

/* Expands the $NAME or ${NAME} at p into b; returns what follows it, or NULL for a form that
 * needs a shell ($(...), ${NAME:-...}). A '$' before anything else is a plain '$'. */
static const char *expand(const char *p, const struct argv *settings, struct buf *b)
{
	const char *name = p + 1;
	int braced = *name == '{';
	if (braced)
		name++;
	if (*name == '(')
		return NULL;
	if (!isalpha((unsigned char)*name) && *name != '_') {
		if (braced)
			return NULL;
		put(b, "$", 1);
		return p + 1;
	}
	const char *e = name;
	while (isalnum((unsigned char)*e) || *e == '_')
		e++;
	if (braced && *e != '}')
		return NULL;
	const char *v = lookup(settings, name, (size_t)(e - name));
	if (v)
		put(b, v, strlen(v));
	return e + braced;
}

int steps_split(const char *line, const struct argv *settings, struct argv *out)
{
	struct buf w = { NULL, 0, 0 };
	struct argv words = ARGV_INIT;
	int in_word = 0;
	const char *p = line;
	while (p && *p) {
		char c = *p;
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			if (in_word) {
				argv_push(&words, w.s ? w.s : "");
				w.n = 0;
				if (w.s)
					w.s[0] = '\0';
				in_word = 0;
			}
			p++;
			continue;
		}
		if (strchr("|&;<>()`", c)) {
			p = NULL;
			break;
		}
		in_word = 1;
		if (c == '\'') {
			const char *e = strchr(p + 1, '\'');
			if (!e) {
				p = NULL;
				break;
			}
			put(&w, p + 1, (size_t)(e - p - 1));
			p = e + 1;
		} else if (c == '"') {
			p++;
			while (p && *p && *p != '"') {
				if (*p == '\\' && p[1] && strchr("\"\\$`", p[1])) {
					put(&w, p + 1, 1);
					p += 2;
				} else if (*p == '$') {
					p = expand(p, settings, &w);
				} else if (*p == '`') {
					p = NULL;
				} else {
					put(&w, p++, 1);
				}
			}
			if (!p || *p != '"') {
				p = NULL;
				break;
			}
			p++;
		} else if (c == '\\') {
			if (!p[1]) {
				p = NULL;
				break;
			}
			put(&w, p + 1, 1);
			p += 2;
		} else if (c == '$') {
			p = expand(p, settings, &w);
		} else {
			put(&w, p++, 1);
		}
	}
	if (p && in_word)
		argv_push(&words, w.s ? w.s : "");
	free(w.s);
	if (!p) {
		argv_release(&words);
		return -1;
	}
	for (size_t i = 0; i < words.n; i++)
		argv_push(out, words.v[i]);
	argv_release(&words);
	return 0;
}

/* "NAME=" at the start of s: a setting. */
static int is_setting(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return 0;
	while (isalnum((unsigned char)*s) || *s == '_')
		s++;
	return *s == '=';
}

/* The value of an option given as "-name value", "-name=value" or "--name=value". */
static const char *option_value(const struct argv *a, const char *const *names)
{
	for (size_t i = 1; i < a->n; i++) {
		for (const char *const *n = names; *n; n++) {
			size_t len = strlen(*n);
			if (strncmp(a->v[i], *n, len))
				continue;
			if (a->v[i][len] == '=')
				return a->v[i] + len + 1;
			if (!a->v[i][len] && i + 1 < a->n)
				return a->v[i + 1];
		}
	}
	return NULL;
}

static int has_arg(const struct argv *a, const char *arg)
{
	for (size_t i = 1; i < a->n; i++)
		if (!strcmp(a->v[i], arg))
			return 1;
	return 0;
}

/* Host compiler options whose value is the next word. */
static int takes_value(const char *opt)
{
	static const char *const names[] = { "-o", "-x", "-include", "-isystem", "-I", "-D", "-U",
					     "-MF", "-MT", "-MQ", "-imacros", "-iquote", "-idirafter",
					     "-iprefix", "-isysroot", "-Xpreprocessor", "-Xassembler",
					     "-Xlinker", "-L", "-l", "-T", "-aux-info", "-ccbin", NULL };
	for (const char *const *n = names; *n; n++)
		if (!strcmp(opt, *n))
			return 1;
	return 0;
}

/* The input of a host compiler step: its last word that is neither an option nor an option's
 * value. */
static const char *host_input(const struct argv *a)
{
	const char *in = NULL;
	for (size_t i = 1; i < a->n; i++) {
		if (a->v[i][0] == '-') {
			if (takes_value(a->v[i]))
				i++;
			continue;
		}
		in = a->v[i];
	}
	return in;
}

static int device_stage(const char *stage)
{
	static const char *const names[] = { "cicc", "cudafe++", "ptxas", "nvlink", "fatbinary",
					     "bin2c", "nvprune", "rm", NULL };
	for (const char *const *n = names; *n; n++)
		if (!strcmp(stage, *n))
			return 1;
	return 0;
}

static void label(struct step *t)
{
	const struct argv *a = &t->argv;
	t->stage = xstrdup(lbasename(a->v[0]));
	t->preprocess = has_arg(a, "-E") && !device_stage(t->stage);
	const char *src = option_value(a, (const char *const[]){ "--orig_src_file_name", NULL });
	if (!src && t->preprocess)
		src = host_input(a);
	if (src)
		t->source = xstrdup(src);

	if (!strcmp(t->stage, "cicc")) {
		const char *v = option_value(a, (const char *const[]){ "-arch", "--gpu-name", NULL });
		if (v)
			t->target = xstrdup(v);
	} else if (!strcmp(t->stage, "ptxas") || !strcmp(t->stage, "nvlink")) {
		const char *v = option_value(a, (const char *const[]){ "-arch", "--arch", "--gpu-name",
									"-gpu-name", NULL });
		if (v)
			t->target = xstrdup(v);
	} else if (t->preprocess) {
		const char *v = option_value(a, (const char *const[]){ "-D__CUDA_ARCH__", NULL });
		if (v) {
			char suffix = '\0';
			for (size_t i = 1; i < a->n; i++) {
				if (!strncmp(a->v[i], "-D__CUDA_ARCH_FEAT_SM", 21))
					suffix = 'a';
				else if (!suffix && !strncmp(a->v[i], "-D__CUDA_ARCH_FAMILY_SPECIFIC__", 31))
					suffix = 'f';
			}
			unsigned long n = strtoul(v, NULL, 10) / 10;
			t->target = suffix ? xasprintf("compute_%lu%c", n, suffix) : xasprintf("compute_%lu", n);
		}
	}
}

size_t steps_parse(struct steps *s, const char *text)
{
	size_t before = s->n;
	const char *source = s->n ? s->v[s->n - 1].source : NULL;
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		const char *next = *end ? end + 1 : end;
		if (strncmp(line, "#$ ", 3)) {
			line = next;
			continue;
		}
		const char *p = line + 3;
		const char *e = end;
		if (is_setting(p)) {
			if (e > p && e[-1] == '\r')
				e--;
			argv_push_owned(&s->settings, xstrndup(p, (size_t)(e - p)));
			line = next;
			continue;
		}
		while (e > p && isspace((unsigned char)e[-1]))
			e--;
		if (s->n == s->alloc) {
			s->alloc = s->alloc ? s->alloc * 2 : 16;
			s->v = XRESIZEVEC(struct step, s->v, s->alloc);
		}
		struct step *t = &s->v[s->n++];
		memset(t, 0, sizeof(*t));
		t->line = xstrndup(p, (size_t)(e - p));
		argv_init(&t->argv);
		t->simple = !steps_split(t->line, &s->settings, &t->argv) && t->argv.n > 0;
		if (!t->simple) {
			argv_release(&t->argv);
			t->stage = xstrdup("");
		} else {
			label(t);
		}
		if (t->source)
			source = t->source;
		else if (source)
			t->source = xstrdup(source);
		line = next;
	}
	return s->n - before;
}
