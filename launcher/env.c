/* The launcher's environment: AISB_* settings, HOME and XDG directories,
 * the values of --env variables and env files. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

#define ENV_FILE_MAX	(1024 * 1024)
#define ENV_FILE_LINES	10000

static const char *const inherited_names[] = { LAUNCHER_INHERITED, NULL };

/* The value of name in envp, or NULL. */
const char *
env_get(char *const *envp, const char *name)
{
	size_t len = strlen(name);

	for (; envp != NULL && *envp != NULL; envp++)
		if (strncmp(*envp, name, len) == 0 && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

/* An XDG base directory: only an absolute value counts (the spec). */
static const char *
xdg(char *const *envp, const char *name)
{
	const char *v = env_get(envp, name);

	return v != NULL && v[0] == '/' ? v : NULL;
}

/* HOME, the XDG directories and the resolved working directory. */
int
env_host(struct launcher *L, const char *cwd, struct aisb_error *err)
{
	const char *home = env_get(L->envp, "HOME");
	struct passwd *pw;

	if (home == NULL || home[0] != '/') {
		if ((pw = getpwuid(getuid())) == NULL || pw->pw_dir == NULL ||
		    pw->pw_dir[0] != '/')
			return aisb_err(err, "HOME is not set and the password "
			    "database has no home for uid %u",
			    (unsigned int)getuid());
		home = pw->pw_dir;
	}
	free(L->host_home);
	free(L->host_project);
	L->host_project = NULL;
	if ((L->host_home = strdup(home)) == NULL)
		return aisb_err(err, "out of memory");
	if ((L->host_project = realpath(cwd, NULL)) == NULL)
		return aisb_errno(err, "working directory %s", cwd);
	L->host.home = L->host_home;
	L->host.project_dir = L->host_project;
	L->host.xdg_config_home = xdg(L->envp, "XDG_CONFIG_HOME");
	L->host.xdg_state_home = xdg(L->envp, "XDG_STATE_HOME");
	L->host.xdg_cache_home = xdg(L->envp, "XDG_CACHE_HOME");
	L->host.xdg_runtime_dir = xdg(L->envp, "XDG_RUNTIME_DIR");
	return 0;
}

/* Apply one AISB_ variable: lists split at blanks, scalars whole. */
static int
env_apply_one(struct launcher *L, const struct policy_key *k,
    const char *value, struct aisb_error *err)
{
	struct policy_origin o;
	struct argv words;
	size_t i;
	int rv = 0;

	policy_origin_set(&o, POLICY_SRC_ENV, "%s", k->env);
	if (!(k->flags & PK_LIST))
		return policy_set(&L->policy, k, value, &o, err);
	argv_init(&words);
	if (argv_add_words(&words, value, POLICY_LIST_MAX) == -1) {
		argv_free(&words);
		return aisb_err(err, "%s: too many entries", k->env);
	}
	for (i = 0; i < words.n && rv == 0; i++)
		rv = policy_set(&L->policy, k, words.v[i], &o, err);
	argv_free(&words);
	return rv;
}

/* Apply every AISB_* variable; unknown ones are warned about. */
int
env_apply(struct launcher *L, struct aisb_error *err)
{
	const struct policy_key *k;
	const char *e, *eq;
	char **ep;

	for (ep = L->envp; ep != NULL && *ep != NULL; ep++) {
		e = *ep;
		if (strncmp(e, "AISB_", 5) != 0 || (eq = strchr(e, '=')) ==
		    NULL || eq[1] == '\0')
			continue;
		if ((size_t)(eq - e) == strlen("AISB_STRICT_ARGS") &&
		    strncmp(e, "AISB_STRICT_ARGS", (size_t)(eq - e)) == 0)
			continue;
		if ((k = policy_key_by_env(e, (size_t)(eq - e))) == NULL) {
			if (policy_warn(&L->policy, "%.*s: not a variable "
			    "ai-sandbox knows; ignored", (int)(eq - e < 64 ?
			    eq - e : 64), e) == -1)
				return aisb_err(err, "out of memory");
			continue;
		}
		if (env_apply_one(L, k, eq + 1, err) == -1)
			return -1;
	}
	return 0;
}

/* Where an env entry came from, for messages: "--env", "FILE:LINE". */
static const char *
entry_where(const struct policy_env *e)
{
	return e->origin.where;
}

/* Take the value of a --env NAME from the launcher's environment. */
static int
env_take(struct launcher *L, struct policy_env *e, struct aisb_error *err)
{
	const char *v = env_get(L->envp, e->name);

	if (v == NULL)
		return aisb_err(err, "%s: %s is not set in the environment",
		    entry_where(e), e->name);
	if (v[0] == '\0')
		return aisb_err(err, "%s: %s is empty in the environment",
		    entry_where(e), e->name);
	if (strpbrk(v, "\n\r") != NULL)
		return aisb_err(err, "%s: %s: the value contains a line break, "
		    "which an env file cannot carry", entry_where(e), e->name);
	if ((e->value = strdup(v)) == NULL)
		return aisb_err(err, "out of memory");
	return 0;
}

/* Read an env file after checking that only its owner, the user, can
 * read or write it. */
static char *
env_file_read(const char *path, struct aisb_error *err)
{
	struct sbuf b;
	struct stat st;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1) {
		aisb_errno(err, "%s", path);
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		aisb_errno(err, "%s", path);
		goto fail0;
	}
	if (!S_ISREG(st.st_mode)) {
		aisb_err(err, "%s: not a regular file", path);
		goto fail0;
	}
	if (st.st_uid != geteuid()) {
		aisb_err(err, "%s: owned by uid %u, not by you (uid %u)", path,
		    (unsigned int)st.st_uid, (unsigned int)geteuid());
		goto fail0;
	}
	if (st.st_mode & 077) {
		aisb_err(err, "%s: mode %04o lets others read or write it; an "
		    "env file must be 0600 (chmod 600 %s)", path,
		    (unsigned int)(st.st_mode & 07777), path);
		goto fail0;
	}
	sbuf_init(&b);
	if (sbuf_read_fd(&b, fd, ENV_FILE_MAX, path, err) == -1)
		goto fail;
	close(fd);
	if (b.len > 0 && memchr(b.p, '\0', b.len) != NULL) {
		aisb_err(err, "%s: contains a NUL byte", path);
		explicit_bzero(b.p, b.len);
		sbuf_free(&b);
		return NULL;
	}
	return sbuf_steal(&b);
fail:
	if (b.p != NULL)
		explicit_bzero(b.p, b.len);
	sbuf_free(&b);
fail0:
	close(fd);
	return NULL;
}

/* One "NAME=value" line of an env file; messages never hold the value. */
static int
env_file_line(struct policy *p, const char *path, size_t lineno, char *line,
    const struct policy_origin *fo, struct aisb_error *err)
{
	struct policy_origin o;
	char *s = line, *eq;
	size_t i;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0' || *s == '#')
		return 0;
	if ((eq = strchr(s, '=')) == NULL)
		return aisb_err(err, "%s:%zu: expected NAME=VALUE", path,
		    lineno);
	*eq = '\0';
	if (!policy_env_name_valid(s, strlen(s)))
		return aisb_err(err, "%s:%zu: invalid variable name \"%.64s\"",
		    path, lineno, s);
	if (strncmp(s, "AISB_", 5) == 0)
		return aisb_err(err, "%s:%zu: %s: names starting AISB_ are "
		    "reserved for ai-sandbox", path, lineno, s);
	/* An explicit --env of the same name wins at the same level. */
	for (i = 0; i < p->env.n; i++)
		if (strcmp(p->env.v[i].name, s) == 0 &&
		    p->env.v[i].origin.src >= fo->src)
			return 0;
	/* The rank is the env-file setting's; the place is the line. */
	policy_origin_set(&o, fo->src, "%s:%zu", path, lineno);
	return policy_env_add(p, s, eq + 1, POLICY_ENV_FILE, &o, err);
}

/* Add every line of an env file; its buffer is wiped after. */
int
env_file_load(struct policy *p, const char *path,
    const struct policy_origin *fo, struct aisb_error *err)
{
	char *buf, *line, *nl;
	size_t lineno = 0, len;
	int rv = 0;

	if ((buf = env_file_read(path, err)) == NULL)
		return -1;
	len = strlen(buf);
	for (line = buf; *line != '\0' && rv == 0; line = nl + 1) {
		if (++lineno > ENV_FILE_LINES) {
			rv = aisb_err(err, "%s: more than %d lines", path,
			    ENV_FILE_LINES);
			break;
		}
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		if (*line != '\0' && line[strlen(line) - 1] == '\r')
			line[strlen(line) - 1] = '\0';
		rv = env_file_line(p, path, lineno, line, fo, err);
		if (nl == NULL)
			break;
	}
	explicit_bzero(buf, len);
	free(buf);
	return rv;
}

static int
env_cmp(const void *a, const void *b)
{
	const struct policy_env *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* TERM, LANG, LC_ALL, LC_CTYPE, TZ: passed on when set and not named. */
static int
env_inherit(struct launcher *L, struct aisb_error *err)
{
	struct policy_envs *l = &L->inherited;
	const char *v;
	size_t i, j;

	for (i = 0; inherited_names[i] != NULL; i++) {
		v = env_get(L->envp, inherited_names[i]);
		if (v == NULL || v[0] == '\0' || strpbrk(v, "\n\r") != NULL)
			continue;
		for (j = 0; j < L->policy.env.n; j++)
			if (strcmp(L->policy.env.v[j].name,
			    inherited_names[i]) == 0)
				break;
		if (j < L->policy.env.n)
			continue;
		if (l->n == l->cap) {
			void *np = realloc(l->v, (l->cap + 8) * sizeof(*l->v));

			if (np == NULL)
				return aisb_err(err, "out of memory");
			l->v = np;
			l->cap += 8;
		}
		memset(&l->v[l->n], 0, sizeof(*l->v));
		if ((l->v[l->n].name = strdup(inherited_names[i])) == NULL ||
		    (l->v[l->n].value = strdup(v)) == NULL)
			return aisb_err(err, "out of memory");
		policy_origin_set(&l->v[l->n].origin, POLICY_SRC_BUILTIN,
		    "inherited");
		l->n++;
	}
	return 0;
}

/* The values: --env from the environment, env files, inherited ones. */
int
env_resolve(struct launcher *L, struct aisb_error *err)
{
	struct policy *p = &L->policy;
	size_t i, nfiles = p->env_files.n;

	for (i = 0; i < p->env.n; i++)
		if (p->env.v[i].kind == POLICY_ENV_HOST &&
		    p->env.v[i].value == NULL && env_take(L, &p->env.v[i],
		    err) == -1)
			return -1;
	for (i = 0; i < nfiles; i++)
		if (env_file_load(p, p->env_files.v[i].s,
		    &p->env_files.v[i].origin, err) == -1)
			return -1;
	if (p->env.n > 1)
		qsort(p->env.v, p->env.n, sizeof(*p->env.v), env_cmp);
	return env_inherit(L, err);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names the env file will hold. */
int
env_names(const struct launcher *L, struct argv *out)
{
	size_t i;

	for (i = 0; i < L->policy.env.n; i++)
		if (argv_add(out, L->policy.env.v[i].name) == -1)
			return -1;
	for (i = 0; i < L->inherited.n; i++)
		if (argv_add(out, L->inherited.v[i].name) == -1)
			return -1;
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), name_cmp);
	return 0;
}

/* The env file's text; the caller keeps it 0600 and wipes it. */
int
env_file_render(const struct launcher *L, struct sbuf *b,
    struct aisb_error *err)
{
	const struct policy_envs *lists[] = { &L->policy.env, &L->inherited };
	const struct policy_env *e;
	size_t i, j;

	for (j = 0; j < 2; j++) {
		for (i = 0; i < lists[j]->n; i++) {
			e = &lists[j]->v[i];
			if (e->value == NULL)
				return aisb_err(err, "%s: no value yet",
				    e->name);
			if (sbuf_printf(b, "%s=%s\n", e->name, e->value) == -1)
				return aisb_err(err, "out of memory");
		}
	}
	return 0;
}
