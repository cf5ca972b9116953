/*
 * A private HOME and project directory per test, and the launcher loaded
 * from an argv and an environment, for the launcher's unit tests.
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#include "launcher.h"

extern char	fx_tmp[64];
extern char	fx_home[128];
extern char	fx_proj[128];

/* mkdtemp /tmp/test-NAME-XXXXXX with home/ and proj/ inside. */
void	fx_setup(const char *);
void	fx_teardown(void);
/* launcher_load with argv "ai-sandbox ARGS..." and environment
 * HOME=fx_home plus ENV...; its result. */
int	fx_load(struct launcher *, const char *const *, const char *const *,
	    struct aisb_error *);

#define ARGS(...)	((const char *const []){ __VA_ARGS__, NULL })
#define ENV(...)	((const char *const []){ __VA_ARGS__, NULL })

#endif /* FIXTURE_H */
