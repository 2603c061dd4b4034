#include "model/options.h"

#include <stdlib.h>
#include <string.h>

#define V OPT_VALUE
#define L OPT_LIST
#define A OPT_ATTACHED
#define H OPT_HIDDEN
#define X OPT_DROPPED

/* Sorted by name in strcmp order; tests/unit/test_options.c checks the order and compares the
 * table with the --help of the nvcc on the machine.
 *
 * Beyond `nvcc --help` of 13.0 (checked against the 11.8, 12.4 and 12.5 binaries):
 *   hidden, accepted by 11.8 to 13.0 without being listed: -Xcudafe, -Xcicc, -Xfatbin;
 *   -dQ/--version-ident (listed by 11.8 only); --host-relocatable-link (listed up to 12.5,
 *   renamed --relocatable-link, still accepted with a deprecation warning);
 *   dropped: -m32 (listed by 11.8, rejected since 12.0). --machine=32 is a value 13.0 rejects,
 *   not an option. */
const struct nvcc_option options_table[] = {
	{ "Ofast-compile", "Ofc", V, OPT_KIND_DEVICE },
	{ "Wdefault-stream-launch", "Wdefault-stream-launch", 0, OPT_KIND_DEVICE },
	{ "Werror", "Werror", V | L, OPT_KIND_DEVICE },
	{ "Wext-lambda-captures-this", "Wext-lambda-captures-this", 0, OPT_KIND_DEVICE },
	{ "Wmissing-launch-bounds", "Wmissing-launch-bounds", 0, OPT_KIND_DEVICE },
	{ "Wno-deprecated-declarations", "Wno-deprecated-declarations", 0, OPT_KIND_DEVICE },
	{ "Wno-deprecated-gpu-targets", "Wno-deprecated-gpu-targets", 0, OPT_KIND_DEVICE },
	{ "Wreorder", "Wreorder", 0, OPT_KIND_DEVICE },
	{ "allow-unsupported-compiler", "allow-unsupported-compiler", 0, OPT_KIND_HOST },
	{ "archive-options", "Xarchive", V | L, OPT_KIND_LINK },
	{ "archiver-binary", "arbin", V, OPT_KIND_LINK },
	{ "augment-host-linker-script", "aug-hls", 0, OPT_KIND_LINK },
	{ "brief-diagnostics", "brief-diag", V, OPT_KIND_DEVICE },
	{ "cicc-options", "Xcicc", V | L | H, OPT_KIND_PASSTHROUGH },
	{ "clean-targets", "clean", 0, OPT_KIND_OUTPUT },
	{ "compile", "c", 0, OPT_KIND_MODE },
	{ "compile-as-tools-patch", "astoolspatch", 0, OPT_KIND_DEVICE },
	{ "compiler-bindir", "ccbin", V, OPT_KIND_HOST },
	{ "compiler-options", "Xcompiler", V | L, OPT_KIND_HOST },
	{ "compress-mode", "compress-mode", V | L, OPT_KIND_DEVICE },
	{ "cubin", "cubin", 0, OPT_KIND_MODE },
	{ "cuda", "cuda", 0, OPT_KIND_MODE },
	{ "cudadevrt", "cudadevrt", V, OPT_KIND_LINK },
	{ "cudafe-options", "Xcudafe", V | L | H, OPT_KIND_PASSTHROUGH },
	{ "cudart", "cudart", V, OPT_KIND_LINK },
	{ "debug", "g", 0, OPT_KIND_HOST },
	{ "default-stream", "default-stream", V, OPT_KIND_DEVICE },
	{ "define-macro", "D", V | L | A, OPT_KIND_PREPROCESSOR },
	{ "dependency-drive-prefix", "ddp", V, OPT_KIND_DEPENDENCY },
	{ "dependency-output", "MF", V, OPT_KIND_DEPENDENCY },
	{ "dependency-target-name", "MT", V, OPT_KIND_DEPENDENCY },
	{ "device-c", "dc", 0, OPT_KIND_MODE },
	{ "device-debug", "G", 0, OPT_KIND_DEVICE },
	{ "device-entity-has-hidden-visibility", "device-entity-has-hidden-visibility", V, OPT_KIND_DEVICE },
	{ "device-link", "dlink", 0, OPT_KIND_MODE },
	{ "device-stack-protector", "device-stack-protector", V, OPT_KIND_DEVICE },
	{ "device-w", "dw", 0, OPT_KIND_MODE },
	{ "diag-error", "diag-error", V | L, OPT_KIND_DEVICE },
	{ "diag-suppress", "diag-suppress", V | L, OPT_KIND_DEVICE },
	{ "diag-warn", "diag-warn", V | L, OPT_KIND_DEVICE },
	{ "disable-warnings", "w", 0, OPT_KIND_DEVICE },
	{ "display-error-number", "err-no", 0, OPT_KIND_DEVICE },
	{ "dlink-time-opt", "dlto", 0, OPT_KIND_DEVICE },
	{ "dont-use-profile", "noprof", 0, OPT_KIND_HOST },
	{ "dopt", "dopt", V, OPT_KIND_DEVICE },
	{ "drive-prefix", "dp", V, OPT_KIND_PREPROCESSOR },
	{ "dryrun", "dryrun", 0, OPT_KIND_DRIVER },
	{ "entries", "e", V | L, OPT_KIND_DEVICE },
	{ "expt-extended-lambda", "expt-extended-lambda", 0, OPT_KIND_DEVICE },
	{ "expt-relaxed-constexpr", "expt-relaxed-constexpr", 0, OPT_KIND_DEVICE },
	{ "extended-lambda", "extended-lambda", 0, OPT_KIND_DEVICE },
	{ "extensible-whole-program", "ewp", 0, OPT_KIND_DEVICE },
	{ "extra-device-vectorization", "extra-device-vectorization", 0, OPT_KIND_DEVICE },
	{ "fatbin", "fatbin", 0, OPT_KIND_MODE },
	{ "fatbin-options", "Xfatbin", V | L | H, OPT_KIND_PASSTHROUGH },
	{ "fdevice-syntax-only", "fdevice-syntax-only", 0, OPT_KIND_DEVICE },
	{ "fdevice-time-trace", "fdevice-time-trace", V, OPT_KIND_OUTPUT },
	{ "fmad", "fmad", V, OPT_KIND_DEVICE },
	{ "force-cl-env-setup", "force-cl-env-setup", 0, OPT_KIND_HOST },
	{ "forward-unknown-opts", "forward-unknown-opts", 0, OPT_KIND_HOST },
	{ "forward-unknown-to-host-compiler", "forward-unknown-to-host-compiler", 0, OPT_KIND_HOST },
	{ "forward-unknown-to-host-linker", "forward-unknown-to-host-linker", 0, OPT_KIND_LINK },
	{ "frandom-seed", "frandom-seed", V, OPT_KIND_DEVICE },
	{ "ftemplate-backtrace-limit", "ftemplate-backtrace-limit", V, OPT_KIND_DEVICE },
	{ "ftemplate-depth", "ftemplate-depth", V, OPT_KIND_DEVICE },
	{ "ftz", "ftz", V, OPT_KIND_DEVICE },
	{ "gen-opt-lto", "gen-opt-lto", 0, OPT_KIND_DEVICE },
	{ "generate-code", "gencode", V | L, OPT_KIND_TARGET },
	{ "generate-dependencies", "M", 0, OPT_KIND_MODE },
	{ "generate-dependencies-with-compile", "MD", 0, OPT_KIND_DEPENDENCY },
	{ "generate-dependency-targets", "MP", 0, OPT_KIND_DEPENDENCY },
	{ "generate-line-info", "lineinfo", 0, OPT_KIND_DEVICE },
	{ "generate-nonsystem-dependencies", "MM", 0, OPT_KIND_MODE },
	{ "generate-nonsystem-dependencies-with-compile", "MMD", 0, OPT_KIND_DEPENDENCY },
	{ "gpu-architecture", "arch", V, OPT_KIND_TARGET },
	{ "gpu-code", "code", V | L, OPT_KIND_TARGET },
	{ "help", "h", 0, OPT_KIND_INFO },
	{ "host-linker-script", "hls", V, OPT_KIND_LINK },
	{ "host-relocatable-link", NULL, H, OPT_KIND_LINK },
	{ "include-path", "I", V | L | A, OPT_KIND_PREPROCESSOR },
	{ "input-drive-prefix", "idp", V, OPT_KIND_PREPROCESSOR },
	{ "jobserver", "jobserver", 0, OPT_KIND_DRIVER },
	{ "jump-table-density", "jtd", V, OPT_KIND_DEVICE },
	{ "keep", "keep", 0, OPT_KIND_OUTPUT },
	{ "keep-device-functions", "keep-device-functions", 0, OPT_KIND_DEVICE },
	{ "keep-dir", "keep-dir", V, OPT_KIND_OUTPUT },
	{ "lib", "lib", 0, OPT_KIND_MODE },
	{ "libdevice-directory", "ldir", V, OPT_KIND_DEVICE },
	{ "library", "l", V | L | A, OPT_KIND_LINK },
	{ "library-path", "L", V | L | A, OPT_KIND_LINK },
	{ "link", "link", 0, OPT_KIND_MODE },
	{ "linker-options", "Xlinker", V | L, OPT_KIND_LINK },
	{ "list-gpu-arch", "arch-ls", 0, OPT_KIND_INFO },
	{ "list-gpu-code", "code-ls", 0, OPT_KIND_INFO },
	{ "lto", "lto", 0, OPT_KIND_DEVICE },
	{ "ltoir", "ltoir", 0, OPT_KIND_MODE },
	{ "m32", "m32", X, OPT_KIND_HOST },
	{ "m64", "m64", 0, OPT_KIND_HOST },
	{ "machine", "m", V, OPT_KIND_HOST },
	{ "maxrregcount", "maxrregcount", V, OPT_KIND_DEVICE },
	{ "no-align-double", NULL, 0, OPT_KIND_DEVICE },
	{ "no-compress", "no-compress", 0, OPT_KIND_DEVICE },
	{ "no-device-link", "nodlink", 0, OPT_KIND_LINK },
	{ "no-display-error-number", "no-err-no", 0, OPT_KIND_DEVICE },
	{ "no-exceptions", "noeh", 0, OPT_KIND_HOST },
	{ "no-host-device-initializer-list", "nohdinitlist", 0, OPT_KIND_DEVICE },
	{ "no-host-device-move-forward", "nohdmoveforward", 0, OPT_KIND_DEVICE },
	{ "nvlink-options", "Xnvlink", V | L, OPT_KIND_PASSTHROUGH },
	{ "objdir-as-tempdir", "objtemp", 0, OPT_KIND_OUTPUT },
	{ "optimization-info", "opt-info", V | L, OPT_KIND_DEVICE },
	{ "optimize", "O", V | A, OPT_KIND_DEVICE },
	{ "options-file", "optf", V | L, OPT_KIND_INPUT },
	{ "optix-ir", "optix-ir", 0, OPT_KIND_MODE },
	{ "output-directory", "odir", V, OPT_KIND_OUTPUT },
	{ "output-file", "o", V, OPT_KIND_OUTPUT },
	{ "pre-include", "include", V | L, OPT_KIND_PREPROCESSOR },
	{ "prec-div", "prec-div", V, OPT_KIND_DEVICE },
	{ "prec-sqrt", "prec-sqrt", V, OPT_KIND_DEVICE },
	{ "preprocess", "E", 0, OPT_KIND_MODE },
	{ "profile", "pg", 0, OPT_KIND_HOST },
	{ "ptx", "ptx", 0, OPT_KIND_MODE },
	{ "ptxas-options", "Xptxas", V | L, OPT_KIND_PASSTHROUGH },
	{ "qpp-config", "qpp-config", V, OPT_KIND_HOST },
	{ "relocatable-device-code", "rdc", V, OPT_KIND_DEVICE },
	{ "relocatable-link", "r", 0, OPT_KIND_LINK },
	{ "relocatable-ptx", "reloc-ptx", 0, OPT_KIND_DEVICE },
	{ "resource-usage", "res-usage", 0, OPT_KIND_DEVICE },
	{ "restrict", "restrict", 0, OPT_KIND_DEVICE },
	{ "run", "run", 0, OPT_KIND_MODE },
	{ "run-args", "run-args", V | L, OPT_KIND_LINK },
	{ "sanitize", "sanitize", V, OPT_KIND_DEVICE },
	{ "save-temps", "save-temps", 0, OPT_KIND_OUTPUT },
	{ "shared", "shared", 0, OPT_KIND_LINK },
	{ "source-in-ptx", "src-in-ptx", 0, OPT_KIND_DEVICE },
	{ "split-compile", "split-compile", V, OPT_KIND_DRIVER },
	{ "split-compile-extended", "split-compile-extended", V, OPT_KIND_DRIVER },
	{ "static-global-template-stub", "static-global-template-stub", V, OPT_KIND_DEVICE },
	{ "std", "std", V, OPT_KIND_HOST },
	{ "system-include", "isystem", V | L, OPT_KIND_PREPROCESSOR },
	{ "target-directory", "target-dir", V, OPT_KIND_OUTPUT },
	{ "threads", "t", V | A, OPT_KIND_DRIVER },
	{ "time", "time", V, OPT_KIND_OUTPUT },
	{ "undefine-macro", "U", V | L | A, OPT_KIND_PREPROCESSOR },
	{ "use-local-env", "use-local-env", 0, OPT_KIND_HOST },
	{ "use_fast_math", "use_fast_math", 0, OPT_KIND_DEVICE },
	{ "verbose", "v", 0, OPT_KIND_DRIVER },
	{ "version", "V", 0, OPT_KIND_INFO },
	{ "version-ident", "dQ", V | H, OPT_KIND_DEVICE },
	{ "x", "x", V, OPT_KIND_INPUT },
};

const size_t options_count = sizeof(options_table) / sizeof(options_table[0]);

struct key {
	const char *name;
	size_t len;
};

static int compare_long(const void *k, const void *e)
{
	const struct key *key = k;
	const struct nvcc_option *opt = e;
	int c = strncmp(key->name, opt->name, key->len);
	if (c)
		return c;
	return opt->name[key->len] ? -1 : 0;
}

const struct nvcc_option *options_find_long(const char *name, size_t len)
{
	struct key key = { name, len };
	return bsearch(&key, options_table, options_count, sizeof(options_table[0]), compare_long);
}

const struct nvcc_option *options_find_short(const char *name, size_t len)
{
	/* Short names are few and not in table order; a scan costs well under a microsecond. */
	for (size_t i = 0; i < options_count; i++) {
		const char *s = options_table[i].short_name;
		if (s && strlen(s) == len && !memcmp(s, name, len))
			return &options_table[i];
	}
	return NULL;
}

const struct nvcc_option *options_find(const char *arg)
{
	if (arg[0] != '-')
		return NULL;
	if (arg[1] == '-')
		return options_find_long(arg + 2, strlen(arg + 2));
	return options_find_short(arg + 1, strlen(arg + 1));
}

const char *options_kind_name(enum option_kind kind)
{
	static const char *const names[] = {
		[OPT_KIND_MODE] = "mode",
		[OPT_KIND_TARGET] = "target",
		[OPT_KIND_INPUT] = "input",
		[OPT_KIND_OUTPUT] = "output",
		[OPT_KIND_PREPROCESSOR] = "preprocessor",
		[OPT_KIND_DEPENDENCY] = "dependency",
		[OPT_KIND_HOST] = "host-compiler",
		[OPT_KIND_LINK] = "link",
		[OPT_KIND_PASSTHROUGH] = "passthrough",
		[OPT_KIND_DEVICE] = "device",
		[OPT_KIND_DRIVER] = "driver",
		[OPT_KIND_INFO] = "info",
	};
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}
