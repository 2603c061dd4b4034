#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "model/config.h"

static void setv(size_t i, const char *n, const char *v)
{
	test_envv[i][0] = n;
	test_envv[i][1] = v;
}

static char *dir;
static void setup(void)
{
	memset(test_envv, 0, sizeof(test_envv));
	dir = test_tmpdir();
}
static void teardown(void)
{
	test_rmtree(dir);
	free(dir);
}
TestSuite(config, .init = setup, .fini = teardown);

static const char *origin_of(const struct config *c, const char *name)
{
	return c->origin[config_item_find(name) - config_items];
}

Test(config, defaults)
{
	struct config c;
	setv(0, "HOME", "/home/u");
	config_init(&c, test_env);
	cr_assert_eq(c.verbosity, VERBOSITY_NORMAL);
	cr_assert_not(c.strict);
	cr_assert_str_eq(c.cache_dir, "/home/u/.cache/nvshim");
	cr_assert_str_eq(origin_of(&c, "verbosity"), "default");
	config_release(&c);
	setv(1, "XDG_CACHE_HOME", "/xdg");
	config_init(&c, test_env);
	cr_assert_str_eq(c.cache_dir, "/xdg/nvshim");
	config_release(&c);
}

/* Each layer overrides the one below, and the origin names the layer that won. */
Test(config, precedence_with_origins)
{
	char *proj = concat(dir, "/proj/sub", NULL);
	char *mk = xasprintf("mkdir -p '%s'", proj);
	cr_assert_eq(system(mk), 0);
	char *install = test_write(dir, "install.ini",
				   "verbosity = debug\nlog_file = /install.log\nstrict = false\n"
				   "options_file_threshold = 1\ncache_dir = /c-install\n");
	char *system_ = test_write(dir, "system.ini",
				   "[nvshim]\nlog_file = /system.log\nstrict = true\n"
				   "options_file_threshold = 2\ncache_dir = /c-system\n");
	char *user = test_write(dir, "user.ini", "strict = false\noptions_file_threshold = 3\n"
						 "cache_dir = /c-user\n");
	char *project = test_write(dir, "proj/.nvshim.ini", "options_file_threshold = 4\n"
							    "cache_dir = relative\n");
	setv(0, "NVSHIM_CACHE_DIR", "/c-env");
	setv(1, "NVSHIM_VERBOSITY", "quiet");
	struct argv args = ARGV_INIT;
	argv_push(&args, "-c");
	argv_push(&args, "--nvshim-verbosity=verbose");
	argv_push(&args, "a.cu");
	struct config_paths paths = { install, system_, user, proj };
	struct config c;
	config_init(&c, test_env);
	config_load(&c, &paths, test_env, &args);

	cr_assert_eq(c.verbosity, VERBOSITY_VERBOSE);
	cr_assert_str_eq(origin_of(&c, "verbosity"), "option --nvshim-verbosity");
	cr_assert_str_eq(c.cache_dir, "/c-env");
	cr_assert_str_eq(origin_of(&c, "cache_dir"), "env NVSHIM_CACHE_DIR");
	cr_assert_eq(c.options_file_threshold, 4);
	char *want = xasprintf("%s:1", project);
	cr_assert_str_eq(origin_of(&c, "options_file_threshold"), want);
	free(want);
	cr_assert_not(c.strict);
	want = xasprintf("%s:1", user);
	cr_assert_str_eq(origin_of(&c, "strict"), want);
	free(want);
	cr_assert_str_eq(c.log_file, "/system.log");
	want = xasprintf("%s:2", system_);
	cr_assert_str_eq(origin_of(&c, "log_file"), want);
	free(want);
	cr_assert_str_eq(origin_of(&c, "real_nvcc"), "default");
	cr_assert_eq(c.files.n, 4);
	cr_assert_eq(c.problems.n, 0, "%s", c.problems.n ? c.problems.v[0] : "");
	/* --nvshim-* options are removed; everything else stays in order. */
	cr_assert_eq(args.n, 2);
	cr_assert_str_eq(args.v[0], "-c");
	cr_assert_str_eq(args.v[1], "a.cu");
	config_release(&c);
	argv_release(&args);
	free(proj);
	free(mk);
	free(install);
	free(system_);
	free(user);
	free(project);
}

Test(config, relative_paths_in_a_file_are_relative_to_it)
{
	char *f = test_write(dir, "user.ini", "log_file = logs/nvshim.log\ncache_dir = ~/cache\n");
	struct config c;
	config_init(&c, test_env);
	config_load_file(&c, f, LAYER_USER);
	char *want = concat(dir, "/logs/nvshim.log", NULL);
	cr_assert_str_eq(c.log_file, want);
	char *home = concat(getenv("HOME"), "/cache", NULL);
	cr_assert_str_eq(c.cache_dir, home);
	free(want);
	free(home);
	free(f);
	config_release(&c);
}

Test(config, bad_lines_are_reported_with_file_and_line_and_skipped)
{
	char longline[400];
	memset(longline, 'x', sizeof(longline));
	memcpy(longline, "log_file = ", 11);
	longline[sizeof(longline) - 2] = '\n';
	longline[sizeof(longline) - 1] = '\0';
	char *text = xasprintf("verbosity = debug\n"
			       "this line has no equals sign\n"
			       "strict = maybe\n"
			       "no_such_setting = 1\n"
			       "verbosity = loud\n"
			       "[rules]\nx = 1\n"
			       "[nvshim]\n"
			       "%s"
			       "options_file_threshold = -5\n"
			       "cache_dir = /ok\n",
			       longline);
	char *f = test_write(dir, "bad.ini", text);
	struct config c;
	config_init(&c, test_env);
	config_load_file(&c, f, LAYER_USER);
	/* Good lines around the bad ones still count. */
	cr_assert_eq(c.verbosity, VERBOSITY_DEBUG);
	cr_assert_str_eq(c.cache_dir, "/ok");
	cr_assert_not(c.strict);
	cr_assert_null(c.log_file);
	cr_assert_eq(c.problems.n, 7);
	const char *expect[] = {
		":2: expected 'name = value', found 'this line has no equals sign'",
		":3: 'strict' must be true or false, not 'maybe'",
		":4: unknown setting 'no_such_setting'",
		":5: 'verbosity' must be one of quiet, normal, verbose, debug, not 'loud'",
		":7: unknown section [rules]; 'x' ignored",
		":9: line longer than",
		":10: 'options_file_threshold' must be a number of bytes, not '-5'",
	};
	for (size_t i = 0; i < 7; i++) {
		cr_assert_eq(strncmp(c.problems.v[i], f, strlen(f)), 0, "%s", c.problems.v[i]);
		cr_assert_not_null(strstr(c.problems.v[i], expect[i]), "got '%s', want '%s'",
				   c.problems.v[i], expect[i]);
	}
	/* config_report prints them in nvcc's style, once. */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	diag_set_stream(m);
	cr_assert_eq(config_report(&c), 7);
	diag_set_stream(NULL);
	fclose(m);
	cr_assert_eq(strncmp(buf, "nvshim warning : ", 17), 0, "%s", buf);
	cr_assert_eq(c.problems.n, 0);
	free(buf);
	free(f);
	free(text);
	config_release(&c);
}

Test(config, strict_turns_problems_into_errors)
{
	char *f = test_write(dir, "s.ini", "strict = true\nbogus = 1\n");
	struct config c;
	config_init(&c, test_env);
	config_load_file(&c, f, LAYER_USER);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	diag_set_stream(m);
	int before = diag_strict_errors();
	config_report(&c);
	diag_set_stream(NULL);
	diag_set_strict(0);
	fclose(m);
	cr_assert_eq(diag_strict_errors(), before + 1);
	cr_assert_eq(strncmp(buf, "nvshim error   : ", 17), 0, "%s", buf);
	free(buf);
	free(f);
	config_release(&c);
}

Test(config, project_file_cannot_choose_programs_unless_trusted)
{
	char *proj = test_write(dir, ".nvshim.ini", "real_nvcc = /evil/nvcc\ntrust_project = true\n"
						    "verbosity = verbose\n");
	struct config_paths paths = { NULL, NULL, NULL, dir };
	struct config c;
	config_init(&c, test_env);
	config_load(&c, &paths, test_env, NULL);
	cr_assert_null(c.real_nvcc);
	cr_assert_not(c.trust_project);
	cr_assert_eq(c.verbosity, VERBOSITY_VERBOSE);
	cr_assert_eq(c.problems.n, 2);
	cr_assert_not_null(strstr(c.problems.v[0], "'real_nvcc' chooses a program to run"));
	cr_assert_not_null(strstr(c.problems.v[1], "'trust_project' cannot be set by a project file"));
	config_release(&c);

	/* The user file trusts it. */
	char *user = test_write(dir, "user.ini", "trust_project = yes\n");
	paths.user = user;
	config_init(&c, test_env);
	config_load(&c, &paths, test_env, NULL);
	cr_assert_str_eq(c.real_nvcc, "/evil/nvcc");
	config_release(&c);

	/* So does the environment, although it is applied after the project file. */
	paths.user = NULL;
	setv(0, "NVSHIM_TRUST_PROJECT", "1");
	config_init(&c, test_env);
	config_load(&c, &paths, test_env, NULL);
	cr_assert_str_eq(c.real_nvcc, "/evil/nvcc");
	config_release(&c);
	free(proj);
	free(user);
}

Test(config, project_file_is_found_upwards)
{
	char *deep = concat(dir, "/a/b/c", NULL);
	char *mk = xasprintf("mkdir -p '%s'", deep);
	cr_assert_eq(system(mk), 0);
	free(test_write(dir, "a/.nvshim.ini", "verbosity = quiet\n"));
	struct config_paths paths = { NULL, NULL, NULL, deep };
	struct config c;
	config_init(&c, test_env);
	config_load(&c, &paths, test_env, NULL);
	cr_assert_eq(c.verbosity, VERBOSITY_QUIET);
	char *want = concat(dir, "/a/.nvshim.ini:1", NULL);
	cr_assert_str_eq(origin_of(&c, "verbosity"), want);
	config_release(&c);
	free(want);
	free(deep);
	free(mk);
}

Test(config, environment_names_and_alias)
{
	setv(0, "NVSHIM_NVCC", "/alias/nvcc");
	setv(1, "NVSHIM_STRICT", "on");
	struct config c;
	config_init(&c, test_env);
	config_load_env(&c, test_env);
	cr_assert_str_eq(c.real_nvcc, "/alias/nvcc");
	cr_assert_str_eq(origin_of(&c, "real_nvcc"), "env NVSHIM_NVCC");
	cr_assert(c.strict);
	config_release(&c);
	setv(2, "NVSHIM_REAL_NVCC", "/canonical/nvcc");
	config_init(&c, test_env);
	config_load_env(&c, test_env);
	cr_assert_str_eq(c.real_nvcc, "/canonical/nvcc");
	config_release(&c);
}

/* config_load_env(config_getenv) reads the process's environment and looks nothing up when no
 * NVSHIM_ variable is set: every name it could look up must start with NVSHIM_. */
Test(config, the_process_environment_fast_path)
{
	for (size_t i = 0; i < config_nitems; i++)
		if (config_items[i].env_alias)
			cr_assert(!strncmp(config_items[i].env_alias, "NVSHIM_", 7), "%s's alias %s",
				  config_items[i].name, config_items[i].env_alias);
	struct config c;
	config_init(&c, config_getenv);
	config_load_env(&c, config_getenv);
	cr_assert(!c.strict);
	config_release(&c);
	setenv("NVSHIM_STRICT", "on", 1);
	setenv("NVSHIM_NVCC", "/alias/nvcc", 1);
	config_init(&c, config_getenv);
	config_load_env(&c, config_getenv);
	cr_assert(c.strict);
	cr_assert_str_eq(c.real_nvcc, "/alias/nvcc");
	cr_assert_str_eq(origin_of(&c, "real_nvcc"), "env NVSHIM_NVCC");
	config_release(&c);
	unsetenv("NVSHIM_STRICT");
	unsetenv("NVSHIM_NVCC");
}

Test(config, flags_bad_and_boolean)
{
	struct argv args = ARGV_INIT;
	argv_push(&args, "--nvshim-strict");
	argv_push(&args, "--nvshim-nope=1");
	argv_push(&args, "--nvshim-log-file");
	argv_push(&args, "--nvshim-cache_dir=/x");
	argv_push(&args, "x.cu");
	struct config c;
	config_init(&c, test_env);
	config_take_flags(&c, &args);
	cr_assert(c.strict);
	cr_assert_str_eq(c.cache_dir, "/x");
	cr_assert_eq(args.n, 1);
	cr_assert_str_eq(args.v[0], "x.cu");
	cr_assert_eq(c.problems.n, 2);
	cr_assert_not_null(strstr(c.problems.v[0], "unknown option '--nvshim-nope'"));
	cr_assert_not_null(strstr(c.problems.v[1], "needs a value"));
	config_release(&c);
	argv_release(&args);
}

Test(config, print_shows_every_item_with_origin)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct config c;
	config_init(&c, test_env);
	config_print(&c, m);
	fclose(m);
	for (size_t i = 0; i < config_nitems; i++)
		cr_assert_not_null(strstr(buf, config_items[i].name));
	cr_assert_not_null(strstr(buf, "# default"));
	free(buf);
	config_release(&c);
}

/* config/nvshim.ini is what the item table generates, and docs name every item. */
Test(config, shipped_files_match_the_item_table)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	config_write_template(m);
	fclose(m);
	char *shipped = test_read(NVSHIM_SOURCE_DIR "/config/nvshim.ini");
	cr_assert_not_null(shipped);
	cr_assert_str_eq(shipped, buf, "config/nvshim.ini is stale: regenerate it with "
				       "`nvshim config --template > config/nvshim.ini`");
	char *docs = test_read(NVSHIM_SOURCE_DIR "/docs/configuration.md");
	cr_assert_not_null(docs);
	for (size_t i = 0; i < config_nitems; i++) {
		char *needle = concat("`", config_items[i].name, "`", NULL);
		cr_assert_not_null(strstr(docs, needle), "docs/configuration.md lacks %s", needle);
		free(needle);
	}
	/* The template itself loads without a problem. */
	char *f = test_write(dir, "t.ini", buf);
	struct config c;
	config_init(&c, test_env);
	config_load_file(&c, f, LAYER_INSTALL);
	cr_assert_eq(c.problems.n, 0);
	config_release(&c);
	free(f);
	free(buf);
	free(shipped);
	free(docs);
}

Test(config, module_rule_sections)
{
	char *f = test_write(dir, "rules.ini",
			     "[module \"csrc/quantization/w8a8/cutlass/**/*_sm90_and_a_very_long_name*.cu\"]\n"
			     "min_arch = 90\nrequire = sm_90a\nbogus = 1\n"
			     "[module]\nmin_arch = 80\n"
			     "[nvshim]\nverbosity = debug\n"
			     "[module \"k.cu\"]\nflags = -ccbin /tmp/evil\n");
	struct config c;
	config_init(&c, test_env);
	config_load_file(&c, f, LAYER_PROJECT);
	cr_assert_eq(c.module_rules.n, 8);
	cr_assert_str_eq(c.module_rules.v[0], "csrc/quantization/w8a8/cutlass/**/*_sm90_and_a_very_long_name*.cu");
	cr_assert_str_eq(c.module_rules.v[1], "min_arch");
	cr_assert(strstr(c.module_rules.v[3], "rules.ini:2"));
	cr_assert_str_eq(c.module_rules.v[5], "require");
	cr_assert_eq(c.verbosity, VERBOSITY_DEBUG);
	cr_assert_eq(c.problems.n, 3);
	cr_assert(strstr(c.problems.v[0], "rules.ini:4: unknown rule key 'bogus'"), "%s", c.problems.v[0]);
	cr_assert(strstr(c.problems.v[1], "a [module] section needs a glob"), "%s", c.problems.v[1]);
	cr_assert(strstr(c.problems.v[2], "cannot come from a project file"), "%s", c.problems.v[2]);
	config_release(&c);
	/* the user's own file may */
	config_init(&c, test_env);
	config_load_file(&c, f, LAYER_USER);
	cr_assert_eq(c.module_rules.n, 12);
	config_release(&c);
	free(f);
}

Test(config, threads_is_auto_off_or_a_number)
{
	struct config c;
	config_init(&c, test_env);
	const struct config_item *item = config_item_find("threads");
	cr_assert_not_null(item);
	cr_assert(item->flags & CONF_NEUTRAL, "--threads does not change what nvcc builds");
	char *v = config_format(&c, item), *why = NULL;
	cr_assert_str_eq(v, "auto");
	free(v);
	static const char *const good[][2] = { { "off", "off" }, { "4", "4" }, { "AUTO", "auto" },
					       { "Off", "off" }, { "1", "1" } };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_assert_eq(config_set(&c, item, good[i][0], LAYER_USER, "test", NULL, &why), 0, "%s", good[i][0]);
		v = config_format(&c, item);
		cr_assert_str_eq(v, good[i][1]);
		free(v);
	}
	cr_assert_eq(c.threads, 1);
	static const char *const bad[] = { "0", "-2", "many", "", "3x", "18446744073709551615" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(config_set(&c, item, bad[i], LAYER_USER, "test", NULL, &why), -1, "%s", bad[i]);
		cr_assert_not_null(strstr(why, "must be auto, off or a number from 1"), "%s", why);
		free(why);
	}
	cr_assert_eq(c.threads, 1, "a bad value changes nothing");
	setv(0, "NVSHIM_THREADS", "off");
	config_load_env(&c, test_env);
	cr_assert_eq(c.threads, (size_t)-1);
	cr_assert_str_eq(origin_of(&c, "threads"), "env NVSHIM_THREADS");
	config_release(&c);
}
