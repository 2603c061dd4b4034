#include "base/inifile.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>
#include <libiberty.h>

/* The next raw line into str (at most num - 1 bytes), from the file or the text. Returns 0 at
 * the end; *whole tells whether the line ended within the buffer. */
static int next_line(struct inifile *f, char *str, int num, int *whole)
{
	*whole = 1;
	if (f->fp) {
		if (!fgets(str, num, f->fp))
			return 0;
		size_t len = strlen(str);
		if (len == (size_t)num - 1 && str[len - 1] != '\n' && !feof(f->fp)) {
			int ch;
			while ((ch = fgetc(f->fp)) != EOF && ch != '\n')
				;
			*whole = 0;
		}
		return 1;
	}
	if (!f->text || !*f->text)
		return 0;
	const char *end = strchr(f->text, '\n');
	size_t len = end ? (size_t)(end - f->text) + 1 : strlen(f->text);
	if (len > (size_t)num - 1) {
		*whole = 0;
		len = (size_t)num - 1;
	}
	memcpy(str, f->text, len);
	str[len] = '\0';
	f->text = end ? end + 1 : f->text + strlen(f->text);
	return 1;
}

/* Reads one line for inih, counting lines and catching what inih would silently misread:
 * lines longer than its buffer, and lines that are neither a setting, a section nor a
 * comment. Those are reported and replaced by an empty line. */
static char *read_line(char *str, int num, void *stream)
{
	struct inifile *f = stream;
	int whole;
	if (!next_line(f, str, num, &whole))
		return NULL;
	f->line++;
	f->continued = 0;
	if (!whole) {
		argv_pushf(f->problems, "%s:%d: line longer than %d characters; ignored", f->origin, f->line,
			   num - 2);
		str[0] = '\0';
		return str;
	}
	const char *p = str;
	while (isspace((unsigned char)*p))
		p++;
	if (!*p || *p == ';' || *p == '#')
		return str;
	if (*p == '[') {
		f->in_setting = 0;
		if (f->on_section)
			f->on_section(f, str, f->user);
		return str;
	}
	if (f->multiline && f->in_setting && p > str) {
		f->continued = 1;
		return str;
	}
	if (!strchr(p, '=') && !strchr(p, ':')) {
		char *shown = xstrdup(p);
		shown[strcspn(shown, "\r\n")] = '\0';
		argv_pushf(f->problems, "%s:%d: expected 'name = value', found '%s'", f->origin, f->line,
			   shown);
		free(shown);
		str[0] = '\0';
		return str;
	}
	f->in_setting = 1;
	return str;
}

static int read_all(struct inifile *f, inifile_setting_fn fn, void *user)
{
	f->user = user;
	f->line = 0;
	f->in_setting = 0;
	/* Debian's inih reads its settings at run time: each table says whether it continues lines. */
	ini_allow_multiline = f->multiline != 0;
	return ini_parse_stream(read_line, f, fn, user);
}

int inifile_read_file(struct inifile *f, FILE *fp, inifile_setting_fn fn, void *user)
{
	f->fp = fp;
	f->text = NULL;
	return read_all(f, fn, user);
}

int inifile_read_text(struct inifile *f, const char *text, inifile_setting_fn fn, void *user)
{
	f->fp = NULL;
	f->text = text;
	return read_all(f, fn, user);
}

char *inifile_section_name(char *line)
{
	char *l = line + strspn(line, " \t");
	memmove(line, l, strlen(l) + 1);
	size_t n = strlen(line);
	while (n && isspace((unsigned char)line[n - 1]))
		line[--n] = '\0';
	char *close = strchr(line, ']');
	if (!close)
		return NULL;
	const char *name = line + 1 + strspn(line + 1, " \t");
	size_t len = name < close ? (size_t)(close - name) : 0;
	while (len && isspace((unsigned char)name[len - 1]))
		len--;
	return xstrndup(name, len);
}

void inifile_store(const struct inifile *f, char **slot, const char *value)
{
	char *v = f->continued && *slot ? concat(*slot, " ", value, NULL) : xstrdup(value);
	free(*slot);
	*slot = v;
}
