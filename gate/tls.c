/*
 * The first TLS records of a CONNECT on a TLS port: reassemble the
 * ClientHello (RFC 8446 4.1.2, RFC 5246 7.4.1.2) across records and TCP
 * segments, walk it with a bounded cursor, take its server_name (RFC 6066
 * 3), and have OpenSSL read the same bytes and agree.
 */
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "gate.h"

#define TLS_REC_HEADER		5	/* type, version, length */
#define TLS_REC_HANDSHAKE	22
#define TLS_REC_MAX		16384	/* RFC 8446 5.1: 2^14 bytes a record */
#define TLS_HS_HEADER		4	/* msg_type, uint24 length */
#define TLS_HS_CLIENT_HELLO	1
#define TLS_RANDOM_LEN		32
#define TLS_SESSION_ID_MAX	32
#define TLS_EXT_SERVER_NAME	0
#define TLS_SNI_HOST_NAME	0
#define TLS_SNI_MAXLEN		255	/* RFC 6066 3: HostName<1..2^8-1> */

/* A read cursor over bytes; every length prefix gets its own sub-cursor. */
struct tls_cur {
	const uint8_t	*p;
	size_t		 len;
};

/* What OpenSSL saw in its client-hello callback. */
struct tls_seen {
	int		 reached;
	int		 has_sni;
	int		 sni_bad;
	char		 sni[HOST_CANON_SIZE];
};

static SSL_CTX	*tls_ctx;

/* Take n bytes; -1 if fewer are left. */
static int
tls_cur_skip(struct tls_cur *c, size_t n)
{
	if (c->len < n)
		return -1;
	c->p += n;
	c->len -= n;
	return 0;
}

/* Read a big-endian integer of n (1-3) bytes. */
static int
tls_cur_getn(struct tls_cur *c, size_t n, uint32_t *v)
{
	size_t i;

	if (c->len < n)
		return -1;
	*v = 0;
	for (i = 0; i < n; i++)
		*v = (*v << 8) | c->p[i];
	return tls_cur_skip(c, n);
}

/*
 * Read an n-byte length prefix and carve that many bytes out as sub; the
 * parent moves past them. -1 if the length runs past the parent.
 */
static int
tls_cur_sub(struct tls_cur *c, size_t n, struct tls_cur *sub)
{
	struct tls_cur save = *c;
	uint32_t len;

	if (tls_cur_getn(c, n, &len) == -1 || c->len < len) {
		*c = save;
		return -1;
	}
	sub->p = c->p;
	sub->len = len;
	return tls_cur_skip(c, len);
}

/*
 * The body of a server_name extension: a ServerNameList that fills it
 * exactly, holding one host_name entry. Also used on the bytes OpenSSL
 * hands its callback.
 */
static int
tls_sni_parse(const uint8_t *p, size_t len, char sni[HOST_CANON_SIZE],
    const char **why)
{
	struct tls_cur ext = { p, len }, list, name;
	struct aisb_error err;
	struct aisb_addr addr;
	uint32_t type;
	int seen = 0;

	if (tls_cur_sub(&ext, 2, &list) == -1 || ext.len != 0 ||
	    list.len == 0) {
		*why = "bad server_name list length";
		return TLS_BAD;
	}
	while (list.len > 0) {
		if (tls_cur_getn(&list, 1, &type) == -1 ||
		    tls_cur_sub(&list, 2, &name) == -1) {
			*why = "bad server_name list length";
			return TLS_BAD;
		}
		if (type != TLS_SNI_HOST_NAME) {
			*why = "unknown server_name type";
			return TLS_BAD;
		}
		if (seen++) {
			*why = "two host_name entries";
			return TLS_BAD;
		}
		if (name.len == 0 || name.len > TLS_SNI_MAXLEN) {
			*why = "bad host_name length";
			return TLS_BAD;
		}
		if (host_canon((const char *)name.p, name.len, sni,
		    &err) == -1) {
			/* "::1" or "[::1]" is no name, but is worth saying. */
			if (addr_parse_literal((const char *)name.p, name.len,
			    &addr) == 1)
				*why = "SNI is an IP address";
			else
				*why = "malformed SNI";
			return TLS_BAD;
		}
		if (addr_parse_literal(sni, strlen(sni), &addr) != 0) {
			*why = "SNI is an IP address";
			return TLS_BAD;
		}
	}
	return TLS_OK;
}

/*
 * The ClientHello body (after its 4-byte header), whole: versions, random,
 * session_id, cipher_suites, compression_methods, then extensions, which
 * are optional before TLS 1.3 but fill the rest exactly when present.
 */
static int
tls_hello_parse(const uint8_t *p, size_t len, struct tls_hello *out)
{
	struct tls_cur c = { p, len }, f, exts, body;
	uint32_t v, type;
	int seen_sni = 0;

	if (tls_cur_getn(&c, 2, &v) == -1 || (v >> 8) != 3) {
		out->why = "bad ClientHello version";
		return TLS_BAD;
	}
	if (tls_cur_skip(&c, TLS_RANDOM_LEN) == -1) {
		out->why = "truncated ClientHello";
		return TLS_BAD;
	}
	if (tls_cur_sub(&c, 1, &f) == -1 || f.len > TLS_SESSION_ID_MAX) {
		out->why = "bad session_id length";
		return TLS_BAD;
	}
	if (tls_cur_sub(&c, 2, &f) == -1 || f.len < 2 || f.len % 2 != 0) {
		out->why = "bad cipher_suites length";
		return TLS_BAD;
	}
	if (tls_cur_sub(&c, 1, &f) == -1 || f.len < 1) {
		out->why = "bad compression_methods length";
		return TLS_BAD;
	}
	if (c.len == 0)
		return TLS_OK;		/* no extensions: no SNI */
	if (tls_cur_sub(&c, 2, &exts) == -1 || c.len != 0) {
		out->why = "extensions length mismatch";
		return TLS_BAD;
	}
	/* Each turn takes at least 4 bytes of exts. */
	while (exts.len > 0) {
		if (tls_cur_getn(&exts, 2, &type) == -1 ||
		    tls_cur_sub(&exts, 2, &body) == -1) {
			out->why = "bad extension length";
			return TLS_BAD;
		}
		if (type != TLS_EXT_SERVER_NAME)
			continue;
		if (seen_sni++) {
			out->why = "two server_name extensions";
			return TLS_BAD;
		}
		if (tls_sni_parse(body.p, body.len, out->sni,
		    &out->why) != TLS_OK)
			return TLS_BAD;
		out->has_sni = 1;
	}
	return TLS_OK;
}

/* Why a record header byte refuses the stream, or NULL while all is well. */
static const char *
tls_record_check(const uint8_t *p, size_t avail, int first)
{
	if (avail >= 1 && p[0] != TLS_REC_HANDSHAKE)
		return first ? "not a TLS handshake" :
		    "record other than handshake inside ClientHello";
	/* 3,1-3,3: TLS 1.0 to 1.2 framing; clients send 3,1 or 3,3. */
	if (avail >= 2 && p[1] != 3)
		return "bad TLS record version";
	if (avail >= 3 && (p[2] < 1 || p[2] > 3))
		return "bad TLS record version";
	return NULL;
}

/*
 * Walk the records at the start of buf, copying their payload into hs
 * until it holds one whole handshake message, the ClientHello. Each header
 * byte is judged as soon as it is there, so "GET / HTTP/1.1" fails on its
 * first byte. On OK, *hslen is the message's length with its header and
 * out->len the bytes of records it took.
 */
static int
tls_records_read(const uint8_t *buf, size_t len, uint8_t *hs,
    size_t *hslen, struct tls_hello *out)
{
	struct tls_cur c = { buf, len };
	size_t have = 0, need = 0, n, take, nrec;
	uint32_t rlen, hlen;

	for (nrec = 0; nrec < TLS_HELLO_RECORDS_MAX; nrec++) {
		if ((out->why = tls_record_check(c.p, c.len, nrec == 0)) !=
		    NULL)
			return TLS_BAD;
		if (c.len < TLS_REC_HEADER)
			return TLS_NEED_MORE;
		tls_cur_skip(&c, 3);
		tls_cur_getn(&c, 2, &rlen);
		if (rlen == 0 || rlen > TLS_REC_MAX) {
			out->why = "bad TLS record length";
			return TLS_BAD;
		}
		n = rlen < c.len ? rlen : c.len;	/* there so far */
		take = n;
		if (take > TLS_HELLO_MAX - have)
			take = TLS_HELLO_MAX - have;
		memcpy(hs + have, c.p, take);
		have += take;

		if (have >= 1 && hs[0] != TLS_HS_CLIENT_HELLO) {
			out->why = "not a ClientHello";
			return TLS_BAD;
		}
		if (need == 0 && have >= TLS_HS_HEADER) {
			hlen = ((uint32_t)hs[1] << 16) | (hs[2] << 8) | hs[3];
			if (hlen > TLS_HELLO_MAX - TLS_HS_HEADER) {
				out->why = "ClientHello too large";
				return TLS_BAD;
			}
			need = TLS_HS_HEADER + hlen;
		}
		if (need != 0 && have >= need) {
			/*
			 * The hello must end its record: a client has nothing
			 * else to say before the server answers, and the
			 * bytes after the hello then start a new record.
			 */
			if (have > need || take < rlen) {
				out->why =
				    "data after ClientHello in its record";
				return TLS_BAD;
			}
			*hslen = need;
			out->len = (size_t)(c.p + rlen - buf);
			return TLS_OK;
		}
		if (n < rlen)
			return TLS_NEED_MORE;
		tls_cur_skip(&c, rlen);
	}
	out->why = "ClientHello in too many records";
	return TLS_BAD;
}

/*
 * OpenSSL's client-hello callback: note that OpenSSL parsed the hello,
 * take the server_name bytes it found, and stop the handshake here.
 */
static int
tls_hello_cb(SSL *ssl, int *al, void *arg)
{
	struct tls_seen *seen = SSL_get_app_data(ssl);
	const unsigned char *p;
	size_t len;
	const char *why;

	if (seen == NULL)
		return SSL_CLIENT_HELLO_ERROR;
	seen->reached = 1;
	if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &p,
	    &len) == 1) {
		seen->has_sni = 1;
		if (tls_sni_parse(p, len, seen->sni, &why) != TLS_OK)
			seen->sni_bad = 1;
	}
	*al = SSL_AD_HANDSHAKE_FAILURE;
	return SSL_CLIENT_HELLO_ERROR;
}

/* The one server context, made on first use; it needs no certificate. */
static SSL_CTX *
tls_ctx_get(void)
{
	if (tls_ctx != NULL)
		return tls_ctx;
	if ((tls_ctx = SSL_CTX_new(TLS_server_method())) == NULL)
		return NULL;
	SSL_CTX_set_session_cache_mode(tls_ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_client_hello_cb(tls_ctx, tls_hello_cb, NULL);
	return tls_ctx;
}

/*
 * Give OpenSSL exactly the records of the hello in a server-mode SSL with
 * memory BIOs; what it writes (an alert) goes to a BIO that is freed
 * unread. Fills seen; -1 if OpenSSL could not be set up.
 */
static int
tls_openssl_read(const uint8_t *buf, size_t len, struct tls_seen *seen)
{
	SSL_CTX *ctx;
	SSL *ssl = NULL;
	BIO *rbio = NULL, *wbio = NULL;
	int rv = -1;

	memset(seen, 0, sizeof(*seen));
	ERR_clear_error();
	if ((ctx = tls_ctx_get()) == NULL)
		goto out;
	if ((ssl = SSL_new(ctx)) == NULL)
		goto out;
	if ((rbio = BIO_new_mem_buf(buf, (int)len)) == NULL ||
	    (wbio = BIO_new(BIO_s_mem())) == NULL) {
		BIO_free(rbio);
		BIO_free(wbio);
		goto out;
	}
	SSL_set_bio(ssl, rbio, wbio);		/* ssl owns both now */
	SSL_set_app_data(ssl, seen);
	SSL_set_accept_state(ssl);
	(void)SSL_do_handshake(ssl);		/* the callback stops it */
	rv = 0;
out:
	SSL_free(ssl);
	ERR_clear_error();
	return rv;
}

int
tls_hello_read(const uint8_t *buf, size_t len, struct tls_hello *out)
{
	uint8_t hs[TLS_HELLO_MAX];
	struct tls_seen seen;
	size_t hslen;
	int rv;

	memset(out, 0, sizeof(*out));
	rv = tls_records_read(buf, len, hs, &hslen, out);
	if (rv == TLS_OK)
		rv = tls_hello_parse(hs + TLS_HS_HEADER,
		    hslen - TLS_HS_HEADER, out);
	if (rv != TLS_OK) {
		if (rv == TLS_BAD)
			out->len = 0;
		out->has_sni = 0;
		out->sni[0] = '\0';
		return rv;
	}

	if (tls_openssl_read(buf, out->len, &seen) == -1) {
		out->why = "TLS library unavailable";
		goto bad;
	}
	if (!seen.reached) {
		out->why = "ClientHello rejected by TLS library";
		goto bad;
	}
	if (seen.has_sni != out->has_sni || seen.sni_bad ||
	    (out->has_sni && strcmp(seen.sni, out->sni) != 0)) {
		out->why = "TLS library disagrees on SNI";
		goto bad;
	}
	return TLS_OK;
bad:
	out->len = 0;
	out->has_sni = 0;
	out->sni[0] = '\0';
	return TLS_BAD;
}
