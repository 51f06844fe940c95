/*
 * sftp_conn.c: an SFTP store's URL, host key check and session memory.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <errno.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libssh2.h>
#include <openssl/evp.h>

#include "log.h"
#include "sftp_conn.h"

#define SFTP_LINK_IN	(256 * 1024)

int
sftp_url_parse(struct sftp_url *u, const char *url)
{
	const char	*p, *at, *slash, *hend, *errstr;
	char		 portbuf[8];
	size_t		 n;

	if (strncmp(url, "sftp://", 7) != 0)
		return -1;
	p = url + 7;
	if ((slash = strchr(p, '/')) == NULL)
		return -1;
	if ((at = memchr(p, '@', slash - p)) == NULL || at == p)
		return -1;
	u->user = strndup(p, at - p);
	p = at + 1;
	if (*p == '[') {
		if ((hend = memchr(p, ']', slash - p)) == NULL)
			return -1;
		u->host = strndup(p + 1, hend - p - 1);
		p = hend + 1;
	} else {
		hend = memchr(p, ':', slash - p);
		if (hend == NULL)
			hend = slash;
		u->host = strndup(p, hend - p);
		p = hend;
	}
	if (u->host == NULL || u->host[0] == '\0')
		return -1;
	u->port = 22;
	if (*p == ':') {
		n = slash - p - 1;
		if (n == 0 || n >= sizeof(portbuf))
			return -1;
		memcpy(portbuf, p + 1, n);
		portbuf[n] = '\0';
		u->port = strtonum(portbuf, 1, 65535, &errstr);
		if (errstr != NULL)
			return -1;
	} else if (p != slash)
		return -1;
	if ((u->root = strdup(slash)) == NULL)
		return -1;
	n = strlen(u->root);
	while (n > 0 && u->root[n - 1] == '/')
		u->root[--n] = '\0';
	return u->user != NULL ? 0 : -1;
}

void
sftp_url_free(struct sftp_url *u)
{
	free(u->user);
	free(u->host);
	free(u->root);
	memset(u, 0, sizeof(*u));
}

/*
 * libssh2 1.10 frees an SFTP handle only when the server confirms its
 * close, so a session that died with transfers open would leak their
 * buffers.  Each session allocates from its own list instead, and
 * whatever libssh2 still holds after libssh2_session_free goes with it.
 */

struct sftp_block {
	LIST_ENTRY(sftp_block)	 entry;
	max_align_t		 pad[0];
};

/* The arena of the link libssh2 hands back to the allocators. */
static struct sftp_arena *
sess_arena(void **abstract)
{
	return &((struct sftp_link *)*abstract)->arena;
}

static void *
sess_alloc(size_t size, void **abstract)
{
	struct sftp_arena	*arena = sess_arena(abstract);
	struct sftp_block	*b;

	if ((b = malloc(sizeof(*b) + size)) == NULL)
		return NULL;
	LIST_INSERT_HEAD(arena, b, entry);
	return b + 1;
}

static void
sess_free(void *p, void **abstract)
{
	struct sftp_block	*b;

	if (p == NULL)
		return;
	b = (struct sftp_block *)p - 1;
	LIST_REMOVE(b, entry);
	free(b);
}

static void *
sess_realloc(void *p, size_t size, void **abstract)
{
	struct sftp_block	*b, *nb;

	if (p == NULL)
		return sess_alloc(size, abstract);
	b = (struct sftp_block *)p - 1;
	LIST_REMOVE(b, entry);
	if ((nb = realloc(b, sizeof(*b) + size)) == NULL) {
		LIST_INSERT_HEAD(sess_arena(abstract), b, entry);
		return NULL;
	}
	LIST_INSERT_HEAD(sess_arena(abstract), nb, entry);
	return nb + 1;
}

static void
sess_sweep(struct sftp_arena *arena)
{
	struct sftp_block	*b;

	while ((b = LIST_FIRST(arena)) != NULL) {
		LIST_REMOVE(b, entry);
		free(b);
	}
}


/*
 * libssh2 reads at most a packet buffer's worth per call and asks the
 * socket again after every packet, even when it just said EAGAIN; on
 * a bulk transfer that is most of the helper's system calls.  Reads
 * here go through a larger buffer, and an empty socket is not asked
 * again until the event loop reports it readable -- except in
 * blocking mode, where libssh2 waits for readability itself.
 */
static ssize_t
sess_recv(libssh2_socket_t sock, void *buf, size_t len, int flags,
    void **abstract)
{
	struct sftp_link	*l = *abstract;
	ssize_t			 n;

	if (l->in_off == l->in_len) {
		if (l->in_dry && !l->blocking)
			return -EAGAIN;
		n = recv(sock, l->in, SFTP_LINK_IN, flags);
		if (n == -1) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				l->in_dry = 1;
			return -errno;
		}
		if (n == 0)
			return 0;
		l->in_off = 0;
		l->in_len = n;
	}
	if (len > l->in_len - l->in_off)
		len = l->in_len - l->in_off;
	memcpy(buf, l->in + l->in_off, len);
	l->in_off += len;
	return len;
}

/* Every cipher libssh2 1.10 has, cheapest first: it runs AES per block. */
static const char sess_ciphers[] = "aes128-ctr,aes192-ctr,aes256-ctr,"
    "aes128-cbc,aes192-cbc,aes256-cbc,rijndael-cbc@lysator.liu.se,"
    "3des-cbc";

LIBSSH2_SESSION *
sftp_session_new(struct sftp_link *l)
{
	LIBSSH2_SESSION	*sess;

	LIST_INIT(&l->arena);
	l->in_off = l->in_len = 0;
	l->in_dry = l->blocking = 0;
	if (l->in == NULL && (l->in = malloc(SFTP_LINK_IN)) == NULL)
		return NULL;
	if ((sess = libssh2_session_init_ex(sess_alloc, sess_free,
	    sess_realloc, l)) == NULL)
		return NULL;
	libssh2_session_callback_set(sess, LIBSSH2_CALLBACK_RECV,
	    (void *)sess_recv);
	libssh2_session_method_pref(sess, LIBSSH2_METHOD_CRYPT_CS,
	    sess_ciphers);
	libssh2_session_method_pref(sess, LIBSSH2_METHOD_CRYPT_SC,
	    sess_ciphers);
	return sess;
}

void
sftp_link_readable(struct sftp_link *l)
{
	l->in_dry = 0;
}

void
sftp_session_destroy(LIBSSH2_SESSION *sess, struct sftp_link *l,
    int sock, int graceful)
{
	/*
	 * Freeing closes channels and waits for the peer, which a
	 * non-blocking session cannot: with the socket shut down every
	 * wait ends at once and the free completes.
	 */
	l->blocking = 1;
	if (graceful)
		libssh2_session_disconnect(sess, "closing");
	if (sock != -1)
		shutdown(sock, SHUT_RDWR);
	libssh2_session_set_timeout(sess, 1000);
	libssh2_session_set_blocking(sess, 1);
	libssh2_session_free(sess);
	sess_sweep(&l->arena);
	free(l->in);
	l->in = NULL;
}


static const char *
hostkey_type_name(int type)
{
	switch (type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return "ssh-rsa";
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		return "ssh-dss";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		return "ecdsa-sha2-nistp256";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		return "ecdsa-sha2-nistp384";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return "ecdsa-sha2-nistp521";
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return "ssh-ed25519";
	default:
		return "unknown";
	}
}

static int
hostkey_type_mask(int type)
{
	switch (type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return LIBSSH2_KNOWNHOST_KEY_ED25519;
	default:
		return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
	}
}

/* "SHA256:<base64>" as ssh-keygen -l prints it. */
static void
hostkey_fingerprint(LIBSSH2_SESSION *sess, char *buf, size_t len)
{
	const char	*hash;
	unsigned char	 b64[64];
	int		 n;

	hash = libssh2_hostkey_hash(sess, LIBSSH2_HOSTKEY_HASH_SHA256);
	if (hash == NULL) {
		strlcpy(buf, "(no fingerprint)", len);
		return;
	}
	n = EVP_EncodeBlock(b64, (const unsigned char *)hash, 32);
	while (n > 0 && b64[n - 1] == '=')
		b64[--n] = '\0';
	snprintf(buf, len, "SHA256:%s", b64);
}

/* Strict: only a key listed for this host and port is accepted. */
int
sftp_hostkey_check(LIBSSH2_SESSION *sess, const char *host, int port,
    const char *known_hosts)
{
	LIBSSH2_KNOWNHOSTS		*kh;
	struct libssh2_knownhost	*entry;
	const char			*key;
	char				 fp[80];
	size_t				 len;
	int				 type, rc;

	if ((key = libssh2_session_hostkey(sess, &len, &type)) == NULL) {
		log_warnx("sftp: %s:%d sent no host key", host, port);
		return 0;
	}
	hostkey_fingerprint(sess, fp, sizeof(fp));
	if ((kh = libssh2_knownhost_init(sess)) == NULL)
		return 0;
	if (libssh2_knownhost_readfile(kh, known_hosts,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH) < 0) {
		log_warnx("sftp: cannot read known-hosts file %s; refusing to "
		    "connect to %s:%d", known_hosts, host, port);
		libssh2_knownhost_free(kh);
		return 0;
	}
	rc = libssh2_knownhost_checkp(kh, host, port, key, len,
	    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
	    hostkey_type_mask(type), &entry);
	libssh2_knownhost_free(kh);
	switch (rc) {
	case LIBSSH2_KNOWNHOST_CHECK_MATCH:
		return 1;
	case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
		log_warnx("sftp: host key of %s:%d (%s %s) does not match "
		    "known-hosts file %s: possible impostor, refusing to "
		    "connect", host, port, hostkey_type_name(type), fp,
		    known_hosts);
		return 0;
	case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
		log_warnx("sftp: host key of %s:%d (%s %s) is not in "
		    "known-hosts file %s: refusing to connect", host,
		    port, hostkey_type_name(type), fp, known_hosts);
		return 0;
	default:
		log_warnx("sftp: cannot check host key of %s:%d (%s %s)",
		    host, port, hostkey_type_name(type), fp);
		return 0;
	}
}

