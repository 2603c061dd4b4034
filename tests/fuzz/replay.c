/* Replays a fuzz target's corpus: every file named, and every file in every directory named,
 * goes to LLVMFuzzerTestOneInput() once. Exits 0 when all returned, printing how many. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libiberty.h>

#include "fuzz.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		return -1;
	}
	size_t len = 0, alloc = 4096, got;
	uint8_t *buf = XNEWVEC(uint8_t, alloc);
	while ((got = fread(buf + len, 1, alloc - len, f)) > 0) {
		len += got;
		if (len == alloc)
			buf = XRESIZEVEC(uint8_t, buf, alloc *= 2);
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
	int n = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat sb;
		if (stat(argv[i], &sb)) {
			fprintf(stderr, "replay: no %s\n", argv[i]);
			bad++;
			continue;
		}
		if (!S_ISDIR(sb.st_mode)) {
			bad += replay_file(argv[i]) != 0;
			n++;
			continue;
		}
		struct dirent **names;
		int k = scandir(argv[i], &names, NULL, alphasort);
		for (int j = 0; j < k; j++) {
			if (names[j]->d_name[0] != '.') {
				char *p = concat(argv[i], "/", names[j]->d_name, NULL);
				bad += replay_file(p) != 0;
				n++;
				free(p);
			}
			free(names[j]);
		}
		free(names);
	}
	printf("replay: %d inputs, %d unreadable\n", n, bad);
	return bad || !n ? 1 : 0;
}
