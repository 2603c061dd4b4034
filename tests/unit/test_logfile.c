#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "base/diag.h"
#include "base/logfile.h"

Test(logfile, json_strings_are_escaped)
{
	char *buf = NULL;
	size_t len = 0;
	logfile_json_string(&buf, &len, "a\"b\\c\nd\te\x01");
	cr_assert_str_eq(buf, "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
	free(buf);
}

Test(logfile, one_line_per_invocation_appended)
{
	char *dir = test_tmpdir();
	char *path = concat(dir, "/log.jsonl", NULL);
	struct argv in = ARGV_INIT, out = ARGV_INIT, notes = ARGV_INIT;
	argv_push(&in, "nvcc");
	argv_push(&in, "-c");
	argv_push(&in, "a \"q\".cu");
	argv_copy(&out, &in);
	argv_push(&notes, "dropped sm_70 (rule targets.unsupported)");
	struct logfile_entry e = { "/usr/local/cuda/bin/nvcc", &in, &out, &notes, 2, 12.5, NULL, 0, NULL };
	cr_assert_eq(logfile_write(path, &e), 0);
	e.status = 0;
	cr_assert_eq(logfile_write(path, &e), 0);
	char *text = test_read(path);
	char *nl = strchr(text, '\n');
	cr_assert_not_null(nl);
	cr_assert_not_null(strchr(nl + 1, '\n'));
	cr_assert_not_null(strstr(text, "\"argv_in\":[\"nvcc\",\"-c\",\"a \\\"q\\\".cu\"]"));
	cr_assert_not_null(strstr(text, "\"notes\":[\"dropped sm_70 (rule targets.unsupported)\"]"));
	cr_assert_not_null(strstr(text, "\"status\":2,\"wall_ms\":12.500,\"maxrss_kb\":"));
	cr_assert_not_null(strstr(text, ",\"build\":null,\"notes_quieted\":0}\n"));
	cr_assert_not_null(strstr(nl, "\"status\":0"));
	/* Every line is valid JSON to python's parser. */
	char *cmd = xasprintf("python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' '%s'",
			      path);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(text);
	argv_release(&in);
	argv_release(&out);
	argv_release(&notes);
	test_rmtree(dir);
	free(path);
	free(dir);
}

Test(logfile, unwritable_log_is_a_warning_not_a_failure)
{
	struct argv a = ARGV_INIT;
	struct logfile_entry e = { "x", &a, &a, &a, 0, 0, NULL, 0, NULL };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	diag_set_stream(m);
	cr_assert_eq(logfile_write("/nonexistent-dir/log", &e), -1);
	diag_set_stream(NULL);
	fclose(m);
	cr_assert_not_null(strstr(buf, "nvshim warning : cannot write the log file"));
	free(buf);
}
