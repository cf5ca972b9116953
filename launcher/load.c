/* Reading every source of a run's policy, in precedence order. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

void
launcher_init(struct launcher *L)
{
	memset(L, 0, sizeof(*L));
	policy_init(&L->policy);
	L->cmd = cmd_default();
}

/* Free the launcher; inherited values are wiped. */
void
launcher_free(struct launcher *L)
{
	size_t i;

	for (i = 0; i < L->inherited.n; i++) {
		free(L->inherited.v[i].name);
		if (L->inherited.v[i].value != NULL) {
			explicit_bzero(L->inherited.v[i].value,
			    strlen(L->inherited.v[i].value));
			free(L->inherited.v[i].value);
		}
	}
	free(L->inherited.v);
	policy_free(&L->policy);
	free(L->host_home);
	free(L->host_project);
	memset(L, 0, sizeof(*L));
}

/* AISB_STRICT_ARGS is read before the arguments it changes. */
static int
load_strict(struct launcher *L, struct aisb_error *err)
{
	const char *v = env_get(L->envp, "AISB_STRICT_ARGS");

	if (v == NULL || v[0] == '\0')
		return 0;
	if (strcmp(v, "yes") == 0 || strcmp(v, "1") == 0 ||
	    strcmp(v, "true") == 0 || strcmp(v, "on") == 0)
		L->strict_args = 1;
	else if (strcmp(v, "no") != 0 && strcmp(v, "0") != 0 &&
	    strcmp(v, "false") != 0 && strcmp(v, "off") != 0)
		return aisb_err(err, "AISB_STRICT_ARGS: invalid boolean "
		    "\"%.32s\" (expected yes or no)", v);
	return 0;
}

/* $config-dir/config, at the user's level. */
static int
load_user_config(struct launcher *L, struct aisb_error *err)
{
	char *dir, *path;
	int rv;

	if (L->policy.config_dir != NULL)
		dir = strdup(L->policy.config_dir);
	else
		dir = policy_default_config_dir(&L->host);
	if (dir == NULL)
		return aisb_err(err, "out of memory");
	rv = asprintf(&path, "%s/config", dir);
	free(dir);
	if (rv < 0)
		return aisb_err(err, "out of memory");
	rv = config_load_file(&L->policy, path, POLICY_SRC_USER, err);
	free(path);
	return rv;
}

/* The project's allowlist, one entry a line, through the gate's parser. */
static int
load_project_allow(struct launcher *L, const char *path,
    struct aisb_error *err)
{
	struct allowlist tmp;
	struct policy_origin o;
	struct stat st;
	size_t i;
	int rv = 0;

	if (stat(path, &st) == -1)
		return errno == ENOENT ? 0 : aisb_errno(err, "%s", path);
	allowlist_init(&tmp);
	if (allowlist_load_file(&tmp, path, err) == -1) {
		allowlist_free(&tmp);
		return -1;
	}
	for (i = 0; i < tmp.n && rv == 0; i++) {
		policy_origin_set(&o, POLICY_SRC_PROJECT, "%s",
		    tmp.v[i].origin);
		rv = policy_allow_add(&L->policy.allow, &tmp.v[i], &o, err);
	}
	allowlist_free(&tmp);
	return rv;
}

/* The project's .ai-sandbox/config and .ai-sandbox/allow. */
static int
load_project(struct launcher *L, struct aisb_error *err)
{
	char *path;
	int rv;

	if (asprintf(&path, "%s/.ai-sandbox/config", L->host.project_dir) < 0)
		return aisb_err(err, "out of memory");
	rv = config_load_file(&L->policy, path, POLICY_SRC_PROJECT, err);
	free(path);
	if (rv == -1)
		return -1;
	if (asprintf(&path, "%s/.ai-sandbox/allow", L->host.project_dir) < 0)
		return aisb_err(err, "out of memory");
	rv = load_project_allow(L, path, err);
	free(path);
	return rv;
}

/* Is SELinux enforcing? Read once, for selinux=auto. */
static int
selinux_enforcing(void)
{
	char c = '0';
	int fd;

	if ((fd = open("/sys/fs/selinux/enforce", O_RDONLY | O_CLOEXEC)) ==
	    -1)
		return 0;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/* Every source in order, then defaults, checks and values. */
int
launcher_load(struct launcher *L, int argc, char **argv, char **envp,
    const char *cwd, struct aisb_error *err)
{
	L->envp = envp;
	if (load_strict(L, err) == -1 ||
	    args_parse(L, argc, argv, err) == -1)
		return -1;
	if (!L->cmd->load)
		return 0;
	if (env_host(L, cwd, err) == -1 ||
	    env_apply(L, err) == -1 ||
	    load_user_config(L, err) == -1 ||
	    load_project(L, err) == -1)
		return -1;
	L->policy.selinux_enforcing = selinux_enforcing();
	L->policy.image_only = L->cmd->load == LAUNCHER_LOAD_IMAGE;
	if (policy_finish(&L->policy, &L->host, err) == -1)
		return -1;
	if (L->policy.image_only)
		return 0;
	return env_resolve(L, err);
}
