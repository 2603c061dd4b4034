/* rules: what configuration says about the targets of particular sources.
 *
 * A rule is an INI section that names sources by glob:
 *
 *   [module "csrc/quantization/machete/[a-z]*.cu"]
 *   min_arch = 90          ; targets below sm_90 are dropped (a virtual arch below it is raised
 *                          ; when its code is high enough: compute_80 -> sm_90 becomes compute_90)
 *   max_arch = 100         ; targets above sm_100 are dropped
 *   require  = sm_90a      ; sm_90 is built as sm_90a (and compute_90 as compute_90a); a/f forms
 *   drop     = sm_75, 86   ; these codes are dropped (a bare number: SASS and PTX)
 *   flags    = -DMACHETE=1 --use_fast_math   ; added to this source's compile
 *
 * Globs: `*` and `?` do not cross a `/`, `**` does, `[...]` is a class. A glob with a `/`
 * matches the end of the source's absolute path at a directory boundary (so
 * "csrc/quantization/[a-z]*.cu" matches /any/where/csrc/quantization/x.cu); one that starts with `/`
 * matches the whole path; one without a `/` matches the file name.
 *
 * Sections come from the rules directory (every *.ini in it, in name order: the shipped
 * <prefix>/etc/nvshim/modules.d holds examples for known projects) and then from the
 * configuration files in their usual order (a project's .nvshim.ini last). For each key the
 * last matching section that sets it wins; an empty value unsets it.
 * Entries are kept as quadruples of strings: GLOB, KEY, VALUE, ORIGIN ("FILE:LINE").
 */
#ifndef NVSHIM_RULES_H
#define NVSHIM_RULES_H

#include "model/arch.h"
#include "base/argv.h"

/* 1 if an INI section name is a rule ("module \"GLOB\"" or "module GLOB"), with *glob set
 * (xmalloc'ed). */
int rules_section(const char *section, char **glob);

/* For INI readers: inih cuts section names at 50 characters, too short for a glob. If `line` is
 * a "[module ...]" header, stores its glob in *glob (freeing the old one; NULL when the header
 * names none) and rewrites the line to "[module]"; INI handlers then take the glob from there. */
void rules_intercept_section(char *line, char **glob);

/* 0 if KEY = VALUE is a valid rule entry, else -1 with *why (xmalloc'ed). */
int rules_check(const char *key, const char *value, char **why);

/* Appends the rule entries of every *.ini file in dir (name order) to quads; problems
 * ("FILE:LINE: what") go to problems. A missing directory is no problem. */
void rules_load_dir(struct argv *quads, const char *dir, struct argv *problems);

/* The rules directory in use: `setting` when set, else <prefix>/etc/nvshim/modules.d of an
 * installed nvshim in exe_dir, else <exe_dir>/etc/nvshim/modules.d (a build tree); NULL when
 * there is none. xmalloc'ed. */
char *rules_dir_path(const char *setting, const char *exe_dir);
/* Appends "rules FILE SIZE MTIME" for each *.ini of dir, in name order: what the fingerprint of
 * a compiler cache needs to see them change. */
void rules_dir_identity(const char *dir, struct argv *out);

/* 1 if the glob matches the absolute path, as described above. */
int rules_glob_match(const char *glob, const char *path);

struct rule_effect {
	unsigned min_arch, max_arch; /* 0: unset */
	struct argv require;         /* arch names: sm_90a, sm_100f */
	struct argv drop;            /* as written: sm_75, compute_75, 75 */
	struct argv flags;           /* extra arguments */
	char *origin[5];             /* where min_arch, max_arch, require, drop, flags came from */
	int matched;                 /* some section matched */
};

void rules_effect_init(struct rule_effect *e);
void rules_effect_release(struct rule_effect *e);

/* The effect of every matching section on the source at abs_path: the rules directory's
 * entries first, then the configuration's. */
void rules_resolve(const struct argv *dir_quads, const struct argv *config_quads, const char *abs_path,
		   struct rule_effect *e);

/* 1 if the rule's drop list names this code. */
int rules_drops(const struct rule_effect *e, const struct arch *code);

#endif
