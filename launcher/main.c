/* ai-sandbox: run a coding agent in a rootless podman sandbox. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"
#include "launcher.h"

extern char **environ;

/* Warnings go to stderr on every run, previews included. */
static void
print_warnings(const struct launcher *L)
{
	size_t i;

	for (i = 0; i < L->policy.warnings.n; i++)
		fprintf(stderr, "ai-sandbox: warning: %s\n",
		    L->policy.warnings.v[i].s);
}

int
main(int argc, char **argv)
{
	struct launcher L;
	struct aisb_error err;
	struct sbuf out;
	char cwd[PATH_MAX];
	int rv;

	memset(&err, 0, sizeof(err));
	launcher_init(&L);
	L.policy.stdin_tty = isatty(STDIN_FILENO);
	L.policy.stdout_tty = isatty(STDOUT_FILENO);
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		perror("ai-sandbox: working directory");
		return LAUNCHER_EXIT_FAIL;
	}
	if (launcher_load(&L, argc, argv, environ, cwd, &err) == -1) {
		print_warnings(&L);
		fprintf(stderr, "ai-sandbox: %s\n", err.msg);
		launcher_free(&L);
		return LAUNCHER_EXIT_USAGE;
	}
	print_warnings(&L);
	sbuf_init(&out);
	rv = L.cmd->exec(&L, &out, &err);
	if (out.len > 0 && fwrite(out.p, 1, out.len, stdout) != out.len)
		rv = -1;
	if (fflush(stdout) != 0 && rv == 0) {
		perror("ai-sandbox: standard output");
		rv = -1;
		err.msg[0] = '\0';
	}
	sbuf_free(&out);
	if (rv == -1 && err.msg[0] != '\0')
		fprintf(stderr, "ai-sandbox: %s\n", err.msg);
	if (L.exit_status != 0)
		rv = L.exit_status;
	else
		rv = rv == -1 ? LAUNCHER_EXIT_FAIL : LAUNCHER_EXIT_OK;
	launcher_free(&L);
	return rv;
}
