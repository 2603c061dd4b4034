#include "modes/cc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "base/diag.h"
#include "base/runner.h"
#include "upgrade/compat.h"
#include "upgrade/compat_dryrun.h"
#include "upgrade/layout.h"
#include "model/outputs.h"

static const char *const cc_names[] = { "cc", "c++", "gcc", "g++", "clang", "clang++" };

int cc_is_name(const char *name)
{
	for (size_t i = 0; i < sizeof(cc_names) / sizeof(cc_names[0]); i++)
		if (!strcmp(name, cc_names[i]))
			return 1;
	return cc_is_versioned(name);
}

int cc_is_versioned(const char *name)
{
	static const char *const families[] = { "gcc-", "g++-", "clang-", "clang++-" };
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		size_t n = strlen(families[i]);
		if (strncmp(name, families[i], n) || !name[n] || name[n] == '.')
			continue;
		const char *p = name + n;
		while ((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9'))
			p++;
		if (!*p)
			return 1;
	}
	return 0;
}

/* c++, g++, clang++ and their versioned names (g++-12) */
static int cc_is_cxx(const char *name)
{
	return strstr(name, "++") != NULL;
}

/* The C++ driver of a C driver's family (xmalloc'ed): nvcc needs a C++ host compiler. */
static char *cc_counterpart(const char *name)
{
	if (!strcmp(name, "cc"))
		return xstrdup("c++");
	if (!strncmp(name, "gcc", 3))
		return concat("g++", name + 3, NULL);
	if (!strncmp(name, "clang", 5) && strncmp(name, "clang++", 7))
		return concat("clang++", name + 5, NULL);
	return xstrdup(name);
}

/* The real compiler: the setting when it is set, else the first `name` on PATH that is not
 * nvshim itself. xmalloc'ed; NULL after an error (none when quiet). *how says where from. */
static char *cc_locate_host(const struct session *s, const char *name, const char *setting_name,
			 const char *setting, int quiet, const char **how)
{
	int is_self;
	*how = "PATH";
	if (setting && *setting) {
		*how = setting_name;
		if (locate_is_candidate(&s->self, setting, &is_self))
			return xstrdup(setting);
		if (!quiet)
			error("%s '%s' %s", setting_name, setting,
			      is_self ? "is nvshim itself; point it at the real compiler"
				      : "is not an executable file");
		return NULL;
	}
	char *found = locate_on_path(&s->self, session_env, name);
	if (found)
		return found;
	if (!quiet)
		error("cannot find the real %s: none on PATH other than nvshim itself; set %s (or "
		      "NVSHIM_%s) to the compiler", name, setting_name,
		      !strcmp(setting_name, "host_cc") ? "HOST_CC" : "HOST_CXX");
	return NULL;
}



int cc_plan(struct session *s, const char *name, struct cc_run *r)
{
	int cxx = cc_is_cxx(name);
	memset(r, 0, sizeof(*r));
	link_result_init(&r->link);
	argv_init(&r->nvargs);
	nvcc_passes_init(&r->ps, s, NULL);
	r->real = cc_locate_host(s, name, cxx ? "host_cxx" : "host_cc", cxx ? s->cfg.host_cxx : s->cfg.host_cc,
			      0, &r->how);
	if (!r->real)
		return -1;
	hostcc_parse(&r->hc, s->args.v, s->args.n);
	if (!r->hc.ncuda || r->hc.mode == HOSTCC_INFO) {
		/* Not CUDA: the real compiler, the arguments as given; links get the link pass. */
		plan_init(&r->plan, r->real, s->args.v, s->args.n);
		struct link_request req;
		link_request_init(&req);
		if (s->cfg.link_lcuda && link_request_from_hostcc(&req, &r->hc))
			nvcc_link_request_pass(s, &req, NULL, &r->plan, &r->link);
		link_request_release(&req);
		return 0;
	}
	if (locate_nvcc(&s->cfg, session_env, &s->self, &r->nvcc, &r->nvcc_how))
		return -1;
	char *ccbin = NULL;
	const char *how;
	if (!getenv("NVCC_CCBIN")) {
		char *cxx_name = cxx ? NULL : cc_counterpart(name);
		ccbin = cxx ? xstrdup(r->real)
			    : cc_locate_host(s, cxx_name, "host_cxx", s->cfg.host_cxx, 1, &how);
		free(cxx_name);
	}
	struct argv notes = ARGV_INIT;
	hostcc_translate(&r->hc, ccbin, &r->nvargs, &notes);
	/* From here on as in nvcc mode: every pass (targets, link, modules). */
	plan_init(&r->plan, r->nvcc, r->nvargs.v, r->nvargs.n);
	argv_pushn(&r->plan.notes, notes.v, notes.n);
	nvcc_passes_release(&r->ps);
	nvcc_passes_init(&r->ps, s, r->nvcc);
	struct invocation inv;
	invocation_parse(&inv, r->nvargs.v, r->nvargs.n, session_env);
	nvcc_plan(s, &inv, r->nvcc, &r->plan, &r->ps, &r->link, NULL, NULL);
	invocation_release(&inv);
	argv_release(&notes);
	free(ccbin);
	return 0;
}

void cc_run_release(struct cc_run *r)
{
	free(r->real);
	free(r->nvcc);
	free(r->nvcc_how);
	hostcc_release(&r->hc);
	argv_release(&r->nvargs);
	nvcc_passes_release(&r->ps);
	plan_release(&r->plan);
	link_result_release(&r->link);
}

int cc_main(const char *name, int n, char **args)
{
	struct session s;
	struct cc_run r;
	int depth = locate_depth(session_env);

	/* From here on a termination signal is passed on to the compiler, never lost (runner.h). */
	runner_catch_signals();
	/* Started by a tool nvshim runs (nvcc's host compiler steps): the real compiler only. */
	/* nvcc's own host compiler steps (it names nvshim's cc on PATH when nvshim did not start
	 * it: a Makefile's $(CUDA_HOME)/bin/nvcc after `nvshim env`): each passes
	 * -D__CUDA_ARCH_LIST__=..., which no build writes itself; they are nvcc's, left as they are */
	for (int i = 0; i < n && !depth; i++)
		if (!strncmp(args[i], "-D__CUDA_ARCH_LIST__=", 21))
			depth = 1;
	session_init_report(&s, n, args, depth == 0);
	if (depth > 0) {
		const char *how;
		int cxx = cc_is_cxx(name);
		char *real = cc_locate_host(&s, name, cxx ? "host_cxx" : "host_cc",
					 cxx ? s.cfg.host_cxx : s.cfg.host_cc, 0, &how);
		int status = 1;
		if (real) {
			struct argv a = ARGV_INIT;
			argv_push(&a, real);
			argv_pushn(&a, s.args.v, s.args.n);
			fflush(NULL);
			runner_exec(real, &a);
			argv_release(&a);
			free(real);
			status = 127;
		}
		session_release(&s);
		return status;
	}
	if (diag_strict_errors()) {
		session_release(&s);
		return 1;
	}
	session_enter_child();
	/* paths into the toolkit view (CUDA_HOME) read as the real toolkit's (view.h) */
	char *unmapped = nvcc_unmap_view(&s, NULL);
	int planned = cc_plan(&s, name, &r);
	if (planned)
		free(unmapped);
	else
		nvcc_note_unmapped(&r.plan, unmapped);
	if (planned) {
		cc_run_release(&r);
		session_release(&s);
		return 1;
	}
	diag_note(VERBOSITY_VERBOSE, "runs %s (%s)", r.plan.tool, r.nvcc ? "CUDA inputs: nvcc" : r.how);
	int status;
	if (r.nvcc) {
		/* nvcc mode on the translated line: the session's arguments become nvcc's (the
		 * modules pass plans again from them, crash bundles record them). */
		argv_release(&s.args);
		argv_copy(&s.args, &r.nvargs);
		struct invocation inv;
		invocation_parse(&inv, s.args.v, s.args.n, session_env);
		status = nvcc_execute(&s, r.nvcc, &inv, &r.plan, &r.ps, &r.link, name, args, (size_t)n);
		invocation_release(&inv);
	} else {
		struct api_context ac = { &s.cfg, NULL, s.self.exe_dir, session_quiet_nvcc, &s };
		/* sccache's -E of a compile (its key): the layered preprocessing where the compile
		 * needs the compatibility layer, and no preprocessor cache entry for a source the
		 * layer may change (compat_dryrun.h). */
		int key = r.hc.mode == HOSTCC_PREPROCESS && compat_dryrun_host_is_key(&r.hc.args);
		int layer = s.cfg.explain_api || !strcmp(s.cfg.compat, "auto");
		/* whether the source includes CUDA headers: one scan for both uses below */
		int cuda = (key || layer) && api_host_wanted(&r.hc);
		if (key && cuda && !runner_signal()) {
			struct compat_context cx = { &ac, session_env, 1 };
			compat_dryrun_host_apply(&cx, &r.hc, &r.plan, 1, NULL);
		}
		nvcc_print_notes(&s, &r.plan);
		struct argv in = ARGV_INIT;
		argv_push(&in, name);
		argv_pushn(&in, args, (size_t)n);
		/* A C/C++ source that includes the CUDA headers: its errors may be about removed or
		 * changed CUDA APIs (api.h), so the compiler's stderr is held. */
		/* A link of -lnvToolsExt likewise: CUDA 13 has no such library; and a line with a
		 * CUDA 13 toolkit's include/, which CCCL moved out of (layout.h). */
		int moved = !strcmp(s.cfg.compat, "auto") &&
			    (layout_links_nvtx(&r.plan.argv) || layout_host_may_need(&r.plan.argv));
		int api = layer && (cuda || moved);
		/* the guard's facts (session.h): the compiler's outputs, its line as given */
		outputs_of_host(&r.hc, &s.outputs);
		argv_push(&s.fallback, r.real);
		argv_pushn(&s.fallback, s.args.v, s.args.n);
		status = nvcc_run(&s, &r.plan, &in, &r.link.retry, NULL, api ? &ac : NULL);
		argv_release(&in);
	}
	cc_run_release(&r);
	session_release(&s);
	return status;
}
