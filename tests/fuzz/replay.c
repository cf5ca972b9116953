/*
 * Corpus replayer: runs a libFuzzer target over every file in the
 * directories (or files) named on the command line, so the normal test run
 * exercises the corpus under the same build (and sanitizers) as the rest.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define REPLAY_FILE_MAX (1024 * 1024)

/* Feed one file to the target; -1 if it cannot be read. */
static int
replay_file(const char *path)
{
	static uint8_t buf[REPLAY_FILE_MAX];
	size_t n;
	FILE *f;

	if ((f = fopen(path, "rb")) == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* A copy of exactly n bytes, so ASan sees reads past the input. */
	uint8_t *copy = malloc(n ? n : 1);
	if (copy == NULL)
		return -1;
	memcpy(copy, buf, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
	return 0;
}

int
main(int argc, char **argv)
{
	char path[4096];
	struct dirent *de;
	struct stat st;
	int i, count = 0, bad = 0;
	DIR *d;

	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == -1) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
			    strerror(errno));
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= replay_file(argv[i]);
			count++;
			continue;
		}
		if ((d = opendir(argv[i])) == NULL)
			return 1;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i],
			    de->d_name);
			bad |= replay_file(path);
			count++;
		}
		closedir(d);
	}
	printf("replayed %d inputs\n", count);
	if (count == 0) {
		fprintf(stderr, "replay: empty corpus\n");
		return 1;
	}
	return bad ? 1 : 0;
}
