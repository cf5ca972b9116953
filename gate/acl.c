/*
 * Egress decisions: which targets and which resolved addresses the gate
 * may reach. No I/O here, so --check and the tests use the same code.
 */
#include <stdio.h>
#include <string.h>

#include "gate.h"

/* Is addr:port the gate's own listening socket? A loop, never allowed. */
static int
acl_is_self(const struct gate_conf *conf, const struct aisb_addr *a,
    uint16_t port)
{
	if (conf == NULL || port != conf->listen_port)
		return 0;
	return addr_equal(a, &conf->listen_addr);
}

/* Decide on host (canonical name or IP literal) and port, before DNS. */
void
acl_check_target(const struct allowlist *al, const struct gate_conf *conf,
    const char *host, int is_ip, const struct aisb_addr *ip, uint16_t port,
    enum allow_mode mode, struct acl_result *r)
{
	memset(r, 0, sizeof(*r));
	r->status = 403;
	if (port == 0) {
		r->reason = "port 0";
		return;
	}
	if (is_ip) {
		if (acl_is_self(conf, ip, port)) {
			r->reason = "the gate's own address";
			return;
		}
		r->entry = allowlist_match_addr(al, ip, port);
		if (r->entry == NULL) {
			r->reason = "IP literal not allowlisted";
			return;
		}
	} else {
		r->entry = allowlist_match_name(al, host, port, mode);
		if (r->entry == NULL) {
			r->reason = "not allowlisted";
			return;
		}
	}
	r->allow = 1;
	r->status = 200;
	r->reason = "allowlisted";
}

/* Keep the addresses the gate may dial; note the others in refused. */
size_t
acl_filter_addrs(const struct allowlist *al, const struct gate_conf *conf,
    struct aisb_addr *v, size_t n, uint16_t port, struct sbuf *refused,
    const char **why)
{
	char buf[ADDR_STR_SIZE], item[ADDR_STR_SIZE + 64];
	const char *range;
	size_t i, kept = 0;

	*why = NULL;
	for (i = 0; i < n; i++) {
		range = NULL;
		if (acl_is_self(conf, &v[i], port))
			range = "gate";
		else if (allowlist_match_addr(al, &v[i], port) == NULL)
			range = addr_classify(&v[i]);
		if (range == NULL) {
			v[kept++] = v[i];
			continue;
		}
		if (*why == NULL)
			*why = range;
		snprintf(item, sizeof(item), "%s (%s)", addr_ntop(&v[i], buf),
		    range);
		if (refused->len > 0)
			sbuf_add(refused, ",", 1);
		json_add_cstr(refused, item);
	}
	return kept;
}
