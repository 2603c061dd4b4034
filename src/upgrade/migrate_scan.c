#include "upgrade/migrate_scan.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

static void directive_seen(struct scan *sc, size_t k)
{
	const char *s = sc->s;
	size_t len = sc->len, e = k;
	while (e < len && s[e] != '\n')
		e++;
	int word = 0;
	if (len - k >= 2 && !strncmp(s + k, "if", 2))
		word = 1;
	else if ((len - k >= 4 && !strncmp(s + k, "else", 4)) || (len - k >= 4 && !strncmp(s + k, "elif", 4)))
		word = 2;
	else if (len - k >= 5 && !strncmp(s + k, "endif", 5))
		word = 3;
	if (word == 1) {
		int mine = memmem(s + k, e - k, "/* nvshim migrate */", 20) != NULL;
		if (sc->depth < (int)sizeof(sc->cond))
			sc->cond[sc->depth] = (unsigned char)mine;
		sc->depth++;
	} else if (word == 2 && sc->depth > 0 && sc->depth <= (int)sizeof(sc->cond)) {
		unsigned char *c = &sc->cond[sc->depth - 1];
		if (*c == 1)
			sc->old_side++;
		*c |= 2;
	} else if (word == 3 && sc->depth > 0) {
		if (sc->depth <= (int)sizeof(sc->cond) && sc->cond[sc->depth - 1] == 3)
			sc->old_side--;
		sc->depth--;
	}
}

int migrate_scan_ident_start(int c) { return isalpha(c) || c == '_'; }
int migrate_scan_ident_char(int c) { return isalnum(c) || c == '_'; }

static void push(struct scan *sc, size_t b, size_t e, unsigned line, char c, int dir, int cont)
{
	if (sc->n == sc->alloc) {
		sc->alloc = sc->alloc ? sc->alloc * 2 : 256;
		sc->v = XRESIZEVEC(struct tok, sc->v, sc->alloc);
	}
	sc->v[sc->n++] = (struct tok){ b, e, line, c, (unsigned)dir, (unsigned)cont, sc->old_side > 0 };
}

unsigned migrate_scan_line(const struct scan *sc, size_t off)
{
	unsigned lo = 0, hi = sc->nlines;
	while (hi - lo > 1) {
		unsigned mid = (lo + hi) / 2;
		if (sc->line_start[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo + 1;
}

void migrate_scan_text(struct scan *sc, const char *s, size_t len)
{
	memset(sc, 0, sizeof(*sc));
	sc->s = s;
	sc->len = len;
	size_t alloc = 64;
	sc->line_start = XNEWVEC(size_t, alloc);
	sc->line_start[sc->nlines++] = 0;
	for (size_t i = 0; i < len; i++)
		if (s[i] == '\n' && i + 1 <= len) {
			if (sc->nlines == alloc) {
				alloc *= 2;
				sc->line_start = XRESIZEVEC(size_t, sc->line_start, alloc);
			}
			sc->line_start[sc->nlines++] = i + 1;
		}
	int at_line_start = 1, directive = 0, include = 0;
	size_t i = 0;
	while (i < len) {
		char c = s[i];
		if (c == '\n') {
			/* A line continued with a backslash keeps the directive. */
			size_t k = i;
			while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t' || s[k - 1] == '\r'))
				k--;
			int cont = k > 0 && s[k - 1] == '\\';
			if (!cont) {
				if (directive && !sc->saw_code &&
				    (include || (sc->seen_include && sc->depth <= sc->include_depth))) {
					sc->last_include_end = i + 1;
					if (include) {
						sc->include_depth = sc->depth;
						sc->seen_include = 1;
					} else if (sc->depth < sc->include_depth) {
						sc->include_depth = sc->depth;
					}
				}
				directive = include = 0;
			}
			at_line_start = 1;
			i++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\\') {
			i++;
			continue;
		}
		if (c == '/' && i + 1 < len && s[i + 1] == '/') {
			while (i < len && s[i] != '\n') {
				/* A // comment continued by a backslash goes on. */
				if (s[i] == '\\' && i + 1 < len && s[i + 1] == '\n')
					i++;
				i++;
			}
			continue;
		}
		if (c == '/' && i + 1 < len && s[i + 1] == '*') {
			i += 2;
			while (i + 1 < len && !(s[i] == '*' && s[i + 1] == '/'))
				i++;
			i = i + 2 < len ? i + 2 : len;
			continue;
		}
		int first = at_line_start;
		at_line_start = 0;
		if (c == '#' && first && !directive) {
			directive = 1;
			size_t k = i + 1;
			while (k < len && (s[k] == ' ' || s[k] == '\t'))
				k++;
			if (len - k >= 7 && !strncmp(s + k, "include", 7)) {
				include = 1;
				/* The header's name, as a token of its own ('h'). */
				size_t q = k + 7;
				while (q < len && (s[q] == ' ' || s[q] == '\t'))
					q++;
				if (q < len && (s[q] == '<' || s[q] == '"')) {
					char close = s[q] == '<' ? '>' : '"';
					size_t qe = q + 1;
					while (qe < len && s[qe] != close && s[qe] != '\n')
						qe++;
					if (qe < len && s[qe] == close)
						push(sc, q + 1, qe, migrate_scan_line(sc, q), 'h', 1, 0);
				}
			}
			directive_seen(sc, k);
			i++;
			continue;
		}
		if (include) {
			i++;
			continue;
		}
		int cont = 0;
		{
			unsigned ln = migrate_scan_line(sc, i);
			if (ln > 1) {
				size_t k = sc->line_start[ln - 1] - 1; /* the '\n' ending the line above */
				while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t' || s[k - 1] == '\r'))
					k--;
				cont = k > 0 && s[k - 1] == '\\';
			}
		}
		if (!directive)
			sc->saw_code = 1;
		/* Raw strings: R"delim( ... )delim", with an optional u8, u, U or L before. */
		if (c == 'R' || ((c == 'u' || c == 'U' || c == 'L') && i + 1 < len)) {
			size_t k = i;
			if (s[k] == 'u' && k + 1 < len && s[k + 1] == '8')
				k += 2;
			else if (s[k] != 'R')
				k++;
			if (k + 1 < len && s[k] == 'R' && s[k + 1] == '"' && (i == 0 || !migrate_scan_ident_char((unsigned char)s[i - 1]))) {
				size_t d = k + 2, de = d;
				while (de < len && s[de] != '(' && de - d < 16)
					de++;
				if (de < len && s[de] == '(') {
					size_t dl = de - d, p = de + 1;
					while (p < len && !(s[p] == ')' && p + 1 + dl < len && !memcmp(s + p + 1, s + d, dl) &&
							    s[p + 1 + dl] == '"'))
						p++;
					push(sc, i, p < len ? p + dl + 2 : len, migrate_scan_line(sc, i), '"', directive, cont);
					i = p < len ? p + dl + 2 : len;
					continue;
				}
			}
		}
		if (c == '"' || c == '\'') {
			size_t k = i + 1;
			while (k < len && s[k] != c && s[k] != '\n') {
				if (s[k] == '\\' && k + 1 < len)
					k++;
				k++;
			}
			push(sc, i, k < len ? k + 1 : len, migrate_scan_line(sc, i), c, directive, cont);
			i = k < len ? k + 1 : len;
			continue;
		}
		if (migrate_scan_ident_start((unsigned char)c)) {
			size_t b = i;
			for (;;) {
				while (i < len && migrate_scan_ident_char((unsigned char)s[i]))
					i++;
				/* a::b, a :: b */
				size_t k = i;
				while (k < len && (s[k] == ' ' || s[k] == '\t'))
					k++;
				if (k + 2 < len && s[k] == ':' && s[k + 1] == ':') {
					size_t m = k + 2;
					while (m < len && (s[m] == ' ' || s[m] == '\t'))
						m++;
					if (m < len && migrate_scan_ident_start((unsigned char)s[m])) {
						i = m;
						continue;
					}
				}
				break;
			}
			/* A leading "::" belongs to the name. */
			if (b >= 2 && s[b - 1] == ':' && s[b - 2] == ':' && sc->n && sc->v[sc->n - 1].c == ':' &&
			    sc->v[sc->n - 1].e == b)
				sc->n--;
			push(sc, b, i, migrate_scan_line(sc, b), 'i', directive, cont);
			continue;
		}
		if (isdigit((unsigned char)c) || (c == '.' && i + 1 < len && isdigit((unsigned char)s[i + 1]))) {
			size_t b = i;
			while (i < len && (isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '\'' ||
					   ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E' ||
									      s[i - 1] == 'p' || s[i - 1] == 'P'))))
				i++;
			push(sc, b, i, migrate_scan_line(sc, b), 'n', directive, cont);
			continue;
		}
		/* Two-character punctuators that matter: ->, ::, ==, <=, >=, != */
		size_t w = 1;
		if (i + 1 < len && ((c == '-' && s[i + 1] == '>') || (c == ':' && s[i + 1] == ':') ||
				    (c == '=' && s[i + 1] == '=') || (c == '!' && s[i + 1] == '=') ||
				    (c == '<' && s[i + 1] == '=') || (c == '>' && s[i + 1] == '=') ||
				    (c == '+' && s[i + 1] == '+') || (c == '-' && s[i + 1] == '-')))
			w = 2;
		char kind = c;
		if (w == 2)
			kind = c == '-' && s[i + 1] == '>' ? 'A' : c == '=' ? 'E' : c == '+' ? 'P' : c == '-' ? 'M' : c;
		push(sc, i, i + w, migrate_scan_line(sc, i), kind, directive, cont);
		i += w;
	}
}

/* A token's name with blanks taken out and a leading "::" dropped (xmalloc'ed). */
char *migrate_scan_name(const struct scan *sc, const struct tok *t)
{
	char *out = XNEWVEC(char, t->e - t->b + 1), *o = out;
	for (size_t k = t->b; k < t->e; k++)
		if (sc->s[k] != ' ' && sc->s[k] != '\t')
			*o++ = sc->s[k];
	*o = '\0';
	if (!strncmp(out, "::", 2))
		memmove(out, out + 2, strlen(out + 2) + 1);
	return out;
}

/* The token index of the bracket closing the one at `open` ('(' '[' '{' '<' for template
 * arguments), or n. Angle brackets count only themselves and () nesting. */
size_t migrate_scan_closing(const struct scan *sc, size_t open)
{
	char o = sc->v[open].c;
	char cl = o == '(' ? ')' : o == '[' ? ']' : o == '{' ? '}' : '>';
	int depth = 0, paren = 0;
	for (size_t k = open; k < sc->n; k++) {
		char c = sc->v[k].c;
		if (o == '<') {
			if (c == '(')
				paren++;
			else if (c == ')')
				paren--;
			if (paren)
				continue;
			if (c == ';' || c == '{')
				return sc->n;
		}
		if (c == o)
			depth++;
		else if (c == cl && !--depth)
			return k;
		else if (o != '<' && (c == '(' || c == '[' || c == '{'))
			depth += 0;
	}
	return sc->n;
}

/* The arguments of the call whose '(' is token `open`: token ranges [b, e) for each, in args
 * (pairs); returns the count, -1 when the call does not close. No argument for "()". */
int migrate_scan_args(const struct scan *sc, size_t open, size_t *close, size_t (*args)[2], int max)
{
	int depth = 0, n = 0;
	size_t start = open + 1;
	for (size_t k = open; k < sc->n; k++) {
		char c = sc->v[k].c;
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}') {
			if (--depth == 0) {
				if (k > start || n > 0) {
					if (n < max) {
						args[n][0] = start;
						args[n][1] = k;
					}
					n++;
				}
				*close = k;
				return n;
			}
		} else if (c == ',' && depth == 1) {
			if (n < max) {
				args[n][0] = start;
				args[n][1] = k;
			}
			n++;
			start = k + 1;
		}
	}
	return -1;
}

char *migrate_scan_bytes(const struct scan *sc, size_t b, size_t e)
{
	if (e > sc->len)
		e = sc->len;
	return b < e ? xstrndup(sc->s + b, e - b) : xstrdup("");
}

/* The text of tokens [tb, te), as written (blanks at both ends trimmed). */
char *migrate_scan_span(const struct scan *sc, size_t tb, size_t te)
{
	if (tb >= te)
		return xstrdup("");
	return migrate_scan_bytes(sc, sc->v[tb].b, sc->v[te - 1].e);
}

char *migrate_scan_squeeze(const char *s)
{
	char *out = XNEWVEC(char, strlen(s) + 1), *o = out;
	for (; *s; s++)
		if (!isspace((unsigned char)*s))
			*o++ = *s;
	*o = '\0';
	return out;
}
/* The template arguments between the '<' token lt and its '>' gt, split at top-level commas:
 * the first max as token ranges [begin, end) into targs; returns how many there are. */
int migrate_scan_targs(const struct scan *sc, size_t lt, size_t gt, size_t targs[][2], int max)
{
	int nt = 0, depth = 0;
	size_t st = lt + 1;
	for (size_t j = lt; j <= gt; j++) {
		char c = sc->v[j].c;
		if (c == '<' || c == '(' || c == '[')
			depth++;
		else if (c == '>' || c == ')' || c == ']')
			depth--;
		if ((c == ',' && depth == 1) || j == gt) {
			if (nt < max) {
				targs[nt][0] = st;
				targs[nt][1] = j;
			}
			nt++;
			st = j + 1;
		}
	}
	return nt;
}
void migrate_scan_release(struct scan *sc)
{
	free(sc->v);
	free(sc->line_start);
	memset(sc, 0, sizeof(*sc));
}
