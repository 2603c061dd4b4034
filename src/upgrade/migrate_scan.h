/* migrate_scan: a C, C++ or CUDA source's text as tokens, for `nvshim migrate`'s recipes
 * (upgrade/migrate.c).
 *
 * migrate_scan_text() splits a text into identifiers (a qualified name "a::b" is one token),
 * numbers, string and character literals and punctuators, skipping comments and the rest of an
 * #include line (whose header name is a token of its own, 'h'). No preprocessor is run: each
 * token says whether it sits on a directive's line, on a line continued from the one above (a
 * macro's body), or in the #else of a version guard migrate wrote itself. The scan also finds
 * where helpers can go (after the leading #include lines and the #if blocks around them). The
 * other functions read the tokens: a bracket's partner, a call's arguments, a template's
 * arguments, a token range's text.
 */
#ifndef NVSHIM_MIGRATE_SCAN_H
#define NVSHIM_MIGRATE_SCAN_H

#include <stddef.h>

struct tok {
	size_t b, e;   /* bytes [b, e) */
	unsigned line; /* 1-based */
	char c;        /* 'i' identifier (a qualified name, "a::b", joined), 'n' number, else the punctuator's first char */
	unsigned directive : 1; /* on a preprocessor line */
	unsigned continued : 1; /* on a line continued from the one above (a macro's body) */
	unsigned old_side : 1;  /* in the #else of a block migrate wrote: the old form, kept */
};

struct scan {
	const char *s;
	size_t len;
	struct tok *v;
	size_t n, alloc;
	size_t *line_start; /* byte offset of each line's start, [0] for line 1 */
	unsigned nlines;
	/* Where the helpers go: the end (after '\n') of the last #include before any code, or of a
	 * directive after it that leaves as many #if blocks open as that #include had (an #endif
	 * around it, a #define after it); include_depth: the #if blocks open at that #include. */
	size_t last_include_end;
	int include_depth, seen_include;
	int saw_code;
	/* The open #if blocks: bit 0 a block migrate wrote ("#if ... /\* nvshim migrate *\/"), bit 1
	 * in its #else; old_side counts the blocks of both bits. */
	unsigned char cond[64];
	int depth, old_side;
};


/* Scans `len` bytes of `s` (kept, not copied) into `sc`; never fails. */
void migrate_scan_text(struct scan *sc, const char *s, size_t len);
void migrate_scan_release(struct scan *sc);

int migrate_scan_ident_start(int c);
int migrate_scan_ident_char(int c);

/* The 1-based line of byte `off`. */
unsigned migrate_scan_line(const struct scan *sc, size_t off);

/* A token's name with blanks taken out and a leading "::" dropped (xmalloc'ed). */
char *migrate_scan_name(const struct scan *sc, const struct tok *t);

/* The token index of the bracket closing the one at `open` ('(' '[' '{' '<' for template
 * arguments), or n. Angle brackets count only themselves and () nesting. */
size_t migrate_scan_closing(const struct scan *sc, size_t open);

/* The arguments of the call whose '(' is token `open`: token ranges [b, e) for each, in args
 * (the first `max`); returns the count, -1 when the call does not close. No argument for "()". */
int migrate_scan_args(const struct scan *sc, size_t open, size_t *close, size_t (*args)[2], int max);

/* The template arguments between the '<' token lt and its '>' gt, split at top-level commas:
 * the first max as token ranges [begin, end) into targs; returns how many there are. */
int migrate_scan_targs(const struct scan *sc, size_t lt, size_t gt, size_t targs[][2], int max);

/* Bytes [b, e) of the text; the text of tokens [tb, te) as written, blanks at both ends
 * trimmed; a string with its blanks taken out (each xmalloc'ed). */
char *migrate_scan_bytes(const struct scan *sc, size_t b, size_t e);
char *migrate_scan_span(const struct scan *sc, size_t tb, size_t te);
char *migrate_scan_squeeze(const char *s);

#endif
