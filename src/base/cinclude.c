/* cinclude: #include lines of source text (see cinclude.h). */
#include "base/cinclude.h"

#include <string.h>

int cinclude_parse(const char *line, const char **name, size_t *len, int *angle)
{
	const char *q = line + strspn(line, " \t");
	if (*q != '#')
		return 0;
	q += 1 + strspn(q + 1, " \t");
	if (strncmp(q, "include", 7))
		return 0;
	q += 7 + strspn(q + 7, " \t");
	if (*q != '<' && *q != '"')
		return 0;
	char close = *q == '<' ? '>' : '"';
	size_t n = strcspn(q + 1, close == '>' ? ">\n" : "\"\n");
	if (q[1 + n] != close)
		return 0;
	*name = q + 1;
	*len = n;
	*angle = close == '>';
	return 1;
}

const char *cinclude_next_line(const char *p)
{
	p = strchr(p, '\n');
	return p && p[1] ? p + 1 : NULL;
}
