/* Words and byte strings in a buffer (cli.h): what machine 0 sends the
 * other machines of a job (their plans), and what they send back (their
 * times). A reader is given bytes from another process: every length is
 * checked against what is left, and a short or broken buffer is an error,
 * never a read past it. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static bool grow(cli_wbuf *p, size_t more) {
  if (!p->ok) return false;
  if (more <= p->room - p->n) return true;
  size_t room = p->room ? p->room : 256;
  while (room - p->n < more) {
    if (room > SIZE_MAX / 2) return p->ok = false;
    room *= 2;
  }
  unsigned char *b = realloc(p->b, room);
  if (!b) return p->ok = false;
  p->b = b;
  p->room = room;
  return true;
}

void cli_wbuf_u64(cli_wbuf *p, uint64_t v) {
  if (!grow(p, 8)) return;
  memcpy(p->b + p->n, &v, 8);
  p->n += 8;
}

void cli_wbuf_bytes(cli_wbuf *p, const void *b, size_t n) {
  cli_wbuf_u64(p, n);
  if (!n || !grow(p, n)) return;
  memcpy(p->b + p->n, b, n);
  p->n += n;
}

void cli_wbuf_str(cli_wbuf *p, const char *s) {
  cli_wbuf_bytes(p, s ? s : "", s ? strlen(s) : 0);
}

void cli_wbuf_free(cli_wbuf *p) {
  free(p->b);
  *p = (cli_wbuf){.ok = true};
}

uint64_t cli_rbuf_u64(cli_rbuf *u) {
  uint64_t v = 0;
  if (!u->ok || u->n - u->at < 8) return u->ok = false, 0;
  memcpy(&v, u->b + u->at, 8);
  u->at += 8;
  return v;
}

const void *cli_rbuf_bytes(cli_rbuf *u, size_t *n) {
  uint64_t len = cli_rbuf_u64(u);
  *n = 0;
  if (!u->ok || len > u->n - u->at) return u->ok = false, NULL;
  const void *b = u->b + u->at;
  u->at += (size_t)len;
  *n = (size_t)len;
  return b;
}

char *cli_rbuf_str(cli_rbuf *u) {
  size_t n;
  const char *b = cli_rbuf_bytes(u, &n);
  if (!u->ok || memchr(b, 0, n)) return u->ok = false, NULL;
  char *s = malloc(n + 1);
  if (!s) return u->ok = false, NULL;
  memcpy(s, b, n);
  s[n] = '\0';
  return s;
}

/* A count of items each at least `least` bytes: at most what is left could
 * hold (a count from the wire bounds no allocation by itself). */
uint64_t cli_rbuf_count(cli_rbuf *u, size_t least) {
  uint64_t k = cli_rbuf_u64(u);
  if (u->ok && least && k > (u->n - u->at) / least) u->ok = false;
  return u->ok ? k : 0;
}
