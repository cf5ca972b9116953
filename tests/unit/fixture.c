/* The launcher tests' shared fixture: see fixture.h. */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fixture.h"

char	fx_tmp[64];
char	fx_home[128];
char	fx_proj[128];

void
fx_setup(const char *name)
{
	snprintf(fx_tmp, sizeof(fx_tmp), "/tmp/test-%s-XXXXXX", name);
	cr_assert_not_null(mkdtemp(fx_tmp));
	snprintf(fx_home, sizeof(fx_home), "%s/home", fx_tmp);
	snprintf(fx_proj, sizeof(fx_proj), "%s/proj", fx_tmp);
	cr_assert_eq(mkdir(fx_home, 0700), 0);
	cr_assert_eq(mkdir(fx_proj, 0700), 0);
}

void
fx_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx_tmp);
	cr_assert_eq(system(cmd), 0);
}

int
fx_load(struct launcher *L, const char *const *args, const char *const *env,
    struct aisb_error *err)
{
	static char envbuf[32][512];
	static char *envp[33];
	static char *argv[64];
	int argc = 0;
	size_t n = 0;

	argv[argc++] = "ai-sandbox";
	for (; args != NULL && *args != NULL && argc < 63; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	snprintf(envbuf[n], sizeof(envbuf[n]), "HOME=%s", fx_home);
	envp[n] = envbuf[n];
	n++;
	for (; env != NULL && *env != NULL && n < 32; env++, n++) {
		snprintf(envbuf[n], sizeof(envbuf[n]), "%s", *env);
		envp[n] = envbuf[n];
	}
	envp[n] = NULL;
	launcher_init(L);
	memset(err, 0, sizeof(*err));
	return launcher_load(L, argc, argv, envp, fx_proj, err);
}
