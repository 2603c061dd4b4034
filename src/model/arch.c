#include "model/arch.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

static const struct {
	const char *prefix;
	enum arch_kind kind;
} kinds[] = { { "compute_", ARCH_VIRTUAL }, { "sm_", ARCH_REAL }, { "lto_", ARCH_LTO } };

int arch_parse(const char *s, struct arch *out)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t len = strlen(kinds[i].prefix);
		if (strncmp(s, kinds[i].prefix, len))
			continue;
		const char *p = s + len;
		/* Two digits at least and no leading zero: "sm_08" is no arch (nvcc rejects it), and
		 * every name parsed prints back as it was written. */
		if (!isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[1]) || p[0] == '0')
			return -1;
		unsigned num = 0;
		while (isdigit((unsigned char)*p) && num < 10000)
			num = num * 10 + (unsigned)(*p++ - '0');
		char suffix = '\0';
		if (*p == 'a' || *p == 'f')
			suffix = *p++;
		if (*p || num >= 10000)
			return -1;
		out->kind = kinds[i].kind;
		out->num = num;
		out->suffix = suffix;
		return 0;
	}
	return -1;
}

char *arch_format(const struct arch *a, char *buf, size_t size)
{
	snprintf(buf, size, "%s%u%s", kinds[a->kind].prefix, a->num,
		 a->suffix ? (a->suffix == 'a' ? "a" : "f") : "");
	return buf;
}

static int suffix_rank(char s) { return s == 'a' ? 2 : s == 'f' ? 1 : 0; }

int arch_cmp(const struct arch *a, const struct arch *b)
{
	if (a->num != b->num)
		return a->num < b->num ? -1 : 1;
	if (a->suffix != b->suffix)
		return suffix_rank(a->suffix) - suffix_rank(b->suffix);
	return (int)a->kind - (int)b->kind;
}

int arch_equal(const struct arch *a, const struct arch *b) { return !arch_cmp(a, b); }

struct arch arch_as(const struct arch *a, enum arch_kind kind)
{
	struct arch r = *a;
	r.kind = kind;
	return r;
}

static const char incompatible[] = "Incompatible code generation requested";

int target_check(const struct target *t, const char **why)
{
	const struct arch *v = &t->virt, *c = &t->code;
	*why = NULL;
	if (v->kind != ARCH_VIRTUAL) {
		*why = "must be a virtual code architecture";
		return -1;
	}
	switch (c->kind) {
	case ARCH_VIRTUAL:
		if (!arch_equal(v, c))
			*why = incompatible;
		break;
	case ARCH_LTO:
	case ARCH_REAL:
		if (c->num < v->num)
			*why = incompatible;
		else if (v->suffix == '\0' && c->suffix == 'f')
			*why = incompatible;
		else if (v->suffix == 'f' && c->kind == ARCH_LTO && !c->suffix)
			*why = incompatible;
		else if (v->suffix == 'a' && c->suffix != 'a')
			*why = incompatible;
		else if (v->suffix == 'f' && c->num / 10 != v->num / 10)
			*why = incompatible;
		break;
	}
	return *why ? -1 : 0;
}

struct arch target_embedded(const struct target *t)
{
	struct arch e = t->code;
	if (e.kind == ARCH_REAL && t->virt.suffix == 'f' && e.suffix == '\0')
		e.suffix = 'f';
	return e;
}

void arch_list_init(struct arch_list *l) { memset(l, 0, sizeof(*l)); }

void arch_list_release(struct arch_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int arch_list_equal(const struct arch_list *a, const struct arch_list *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (!arch_equal(&a->v[i].virt, &b->v[i].virt) || !arch_equal(&a->v[i].code, &b->v[i].code))
			return 0;
	return 1;
}

void arch_list_add(struct arch_list *l, const struct target *t)
{
	for (size_t i = 0; i < l->n; i++)
		if (arch_equal(&l->v[i].virt, &t->virt) && arch_equal(&l->v[i].code, &t->code))
			return;
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? l->alloc * 2 : 8;
		l->v = XRESIZEVEC(struct target, l->v, l->alloc);
	}
	l->v[l->n++] = *t;
}

static int add_pairs(struct arch_list *l, const struct arch *virt, const struct argv *codes,
		     char **why)
{
	char vb[32], cb[32];
	for (size_t i = 0; i < codes->n; i++) {
		struct target t = { *virt, { 0, 0, 0 } };
		if (arch_parse(codes->v[i], &t.code)) {
			*why = xasprintf("Value '%s' is not defined for option 'gpu-code'", codes->v[i]);
			return -1;
		}
		const char *w;
		if (target_check(&t, &w)) {
			*why = xasprintf("%s: arch='%s', code='%s'", w, arch_format(virt, vb, sizeof(vb)),
					 arch_format(&t.code, cb, sizeof(cb)));
			return -1;
		}
		arch_list_add(l, &t);
	}
	return 0;
}

/* A -gencode value is a comma list of keyword=value items, where a value may be a bracketed
 * or double-quoted comma list: arch=compute_80,code=[sm_80,compute_80]. */
int arch_list_parse_gencode(struct arch_list *l, const char *value, char **why)
{
	char *arch_text = NULL;
	struct argv codes = ARGV_INIT;
	int have_code = 0, rc = -1;
	const char *p = value;

	*why = NULL;
	l->given = 1;
	while (*p) {
		const char *eq = strchr(p, '=');
		const char *comma = strchr(p, ',');
		if (!eq || (comma && comma < eq)) {
			size_t len = comma ? (size_t)(comma - p) : strlen(p);
			*why = xasprintf("'%.*s' is not in 'keyword=value' format", (int)len, p);
			goto out;
		}
		char *key = xstrndup(p, (size_t)(eq - p));
		const char *v = eq + 1, *end;
		char close = *v == '[' ? ']' : *v == '"' ? '"' : '\0';
		if (close) {
			end = strchr(v + 1, close);
			if (!end) {
				*why = xasprintf("unbalanced '%c' in '%s'", *v, value);
				free(key);
				goto out;
			}
			v++;
		} else {
			end = v + strcspn(v, ",");
		}
		char *val = xstrndup(v, (size_t)(end - v));
		p = end + (close ? 1 : 0);
		if (*p == ',')
			p++;
		int is_arch = !strcmp(key, "arch"), is_code = !strcmp(key, "code");
		if (!is_arch && !is_code) {
			*why = xasprintf("Keyword '%s' is not defined for option 'generate-code'", key);
		} else if ((is_arch && arch_text) || (is_code && have_code)) {
			*why = xasprintf("redefinition of keyword '%s'", key);
		} else if (is_arch) {
			arch_text = val;
			val = NULL;
		} else {
			invocation_split_list(&codes, val);
			have_code = 1;
		}
		free(key);
		free(val);
		if (*why)
			goto out;
	}
	struct arch virt;
	if (!arch_text || !have_code) {
		*why = xasprintf("Option '--generate-code %s', missing %s", value,
				 arch_text ? "code" : "architecture");
	} else if (arch_parse(arch_text, &virt)) {
		*why = xasprintf("Unsupported gpu architecture '%s'", arch_text);
	} else if (virt.kind != ARCH_VIRTUAL) {
		*why = xasprintf("Value of -arch option ('%s') must be a virtual code architecture",
				 arch_text);
	} else {
		rc = add_pairs(l, &virt, &codes, why);
	}
out:
	free(arch_text);
	argv_release(&codes);
	return rc;
}

/* The targets of the last -arch, with the last -code: nvcc keeps only those. */
static int expand_arch(struct arch_list *l, const struct inv_arg *arch_opt, const struct inv_arg *code_opt,
		       char **why)
{
	const char *v = arch_opt->value;
	struct arch a;
	if (!strcmp(v, "native")) {
		l->native = 1;
		if (code_opt) {
			*why = xstrdup("Cannot use '-arch=native' with '--gpu-code (-code)'");
			return -1;
		}
		return 0;
	}
	if (!strcmp(v, "all")) {
		l->all = 1;
		return 0;
	}
	if (!strcmp(v, "all-major")) {
		l->all_major = 1;
		return 0;
	}
	if (arch_parse(v, &a)) {
		*why = xasprintf("Unsupported gpu architecture '%s'", v);
		return -1;
	}
	if (code_opt && code_opt->value) {
		if (a.kind == ARCH_REAL) {
			*why = xasprintf("Value of -arch option ('%s') must be a virtual code architecture", v);
			return -1;
		}
		struct arch virt = arch_as(&a, ARCH_VIRTUAL);
		struct argv codes = ARGV_INIT;
		invocation_split_list(&codes, code_opt->value);
		int rc = add_pairs(l, &virt, &codes, why);
		argv_release(&codes);
		return rc;
	}
	struct arch virt = arch_as(&a, ARCH_VIRTUAL);
	if (a.kind == ARCH_REAL && a.suffix) {
		/* For sm_NNa and sm_NNf nvcc also runs a plain pass and embeds its PTX. */
		struct arch plain = virt;
		plain.suffix = '\0';
		arch_list_add(l, &(struct target){ plain, plain });
	}
	if (a.kind == ARCH_REAL || a.kind == ARCH_LTO)
		arch_list_add(l, &(struct target){ virt, a });
	if (a.kind != ARCH_LTO)
		arch_list_add(l, &(struct target){ virt, virt });
	return 0;
}

int arch_list_from_invocation(struct arch_list *l, const struct invocation *inv, char **why)
{
	const struct inv_arg *arch_opt = invocation_find(inv, "gpu-architecture");
	const struct inv_arg *code_opt = invocation_find(inv, "gpu-code");
	*why = NULL;

	if (code_opt && !(arch_opt && arch_opt->value)) {
		*why = xstrdup("-arch option not specified");
		return -1;
	}
	/* In the order of the command line, -arch where its last occurrence stands. */
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *g = &inv->args[i];
		if (g == arch_opt && g->value) {
			l->given = 1;
			if (expand_arch(l, arch_opt, code_opt, why))
				return -1;
		}
		/* One specification per option: its code list is the rest of the value. */
		if (g->what == ARG_OPTION && !strcmp(g->opt->name, "generate-code") && g->value &&
		    arch_list_parse_gencode(l, g->value, why))
			return -1;
	}
	return 0;
}

void arch_list_to_args(const struct arch_list *l, struct argv *out)
{
	char vb[32], cb[32];
	int *done = XCNEWVEC(int, l->n ? l->n : 1);
	for (size_t i = 0; i < l->n; i++) {
		if (done[i])
			continue;
		char *codes = NULL;
		size_t count = 0;
		for (size_t j = i; j < l->n; j++) {
			if (done[j] || !arch_equal(&l->v[j].virt, &l->v[i].virt))
				continue;
			done[j] = 1;
			arch_format(&l->v[j].code, cb, sizeof(cb));
			char *next = codes ? concat(codes, ",", cb, NULL) : xstrdup(cb);
			free(codes);
			codes = next;
			count++;
		}
		argv_pushf(out, "-gencode=arch=%s,code=%s%s%s", arch_format(&l->v[i].virt, vb, sizeof(vb)),
			   count > 1 ? "[" : "", codes, count > 1 ? "]" : "");
		free(codes);
	}
	free(done);
}

static int one_code_kept(const struct target *t, enum arch_kind kind)
{
	return t->code.kind == kind || (kind == ARCH_LTO && t->code.kind == ARCH_VIRTUAL);
}

void arch_list_one_code(struct arch_list *l, enum arch_kind kind)
{
	size_t w = 0;
	for (size_t i = 0; i < l->n; i++) {
		/* an entry goes only where its architecture has one of the kept kind */
		int other = 0;
		for (size_t k = 0; k < l->n && !other; k++)
			other = k != i && arch_equal(&l->v[k].virt, &l->v[i].virt) && one_code_kept(&l->v[k], kind);
		if (one_code_kept(&l->v[i], kind) || !other)
			l->v[w++] = l->v[i];
	}
	l->n = w;
}
