/*
 * aisb-init: the sandbox container's entrypoint. Private header.
 */
#ifndef INIT_H
#define INIT_H

#include "aisb.h"
#include "policy.h"

struct init_conf {
	int		 net;		/* enum policy_net */
	char		 gate_addr[ADDR_STR_SIZE];
	uint16_t	 gate_port;
	long		 uid;
	long		 gid;
	int		 keep_root;
	int		 allow_unenforced;
	int		 print_ruleset;
	int		 help;
	char		**cmd;
	int		 ncmd;
};

/* Exit statuses (docs/configuration.md has the whole table). */
#define INIT_EXIT_INSTALL	77	/* ruleset could not be installed */
#define INIT_EXIT_VERIFY	78	/* ruleset did not verify */
#define INIT_EXIT_PRIVS		79	/* privileges could not be dropped */
#define INIT_EXIT_USAGE		125

/* init.c */
extern const char init_usage[];
void	 init_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 init_fatal(int, const char *, ...)
	    __attribute__((format(printf, 2, 3), noreturn));
void	 init_ruleset(const struct init_conf *, const struct policy *);
void	 init_drop(const struct init_conf *);
void	 init_environment(const struct init_conf *);
void	 init_exec(const struct init_conf *) __attribute__((noreturn));
int	 init_supervise(const struct init_conf *);
int	 init_parse(int, char **, struct init_conf *, struct policy *,
	    struct aisb_error *);
int	 init_ruleset_verify(const char *, struct aisb_error *);
int	 init_status_verify(const char *, struct aisb_error *);

#endif /* INIT_H */
