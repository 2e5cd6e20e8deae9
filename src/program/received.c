/* Programs of another machine, on the side that runs them (docs/format.md "The
 * remote binary" and "The run words"): a controller sends the description
 * with each device's id on this machine; each run is words naming the
 * program, each input as memory of this machine, and the frame's ints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program_internal.h"

#define REMOTE_MAGIC     "rig.remote\n"
#define REMOTE_MAGIC_LEN 11

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

rig_status rig_program_remote_binary(const rig_desc *desc, const int64_t *ids, size_t nids,
                                     uint8_t **bytes, size_t *len, rig_error *err) {
  uint8_t *d;
  size_t dlen;
  rig_status st = rig_desc_to_bytes(desc, &d, &dlen, err);
  if (st != RIG_OK) return st;
  size_t n = REMOTE_MAGIC_LEN + 8 * (nids + 1) + dlen;
  uint8_t *b = malloc(n);
  if (!b) {
    free(d);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for a remote binary");
  }
  memcpy(b, REMOTE_MAGIC, REMOTE_MAGIC_LEN);
  put64(b + REMOTE_MAGIC_LEN, nids);
  for (size_t i = 0; i < nids; i++) put64(b + REMOTE_MAGIC_LEN + 8 * (i + 1), (uint64_t)ids[i]);
  memcpy(b + REMOTE_MAGIC_LEN + 8 * (nids + 1), d, dlen);
  free(d);
  *bytes = b;
  *len = n;
  return RIG_OK;
}

/* An INT of the remote binary's header, as the description's decoder reads
 * them. */
static rig_status get_int(const uint8_t *b, size_t len, size_t *pos, int64_t *out, rig_error *err) {
  if (len - *pos < 8)
    return rig_error_set(err, RIG_EREFUSED,
                         "a malformed program at byte %zu: an integer past the end", *pos);
  int64_t v = (int64_t)get64(b + *pos);
  if (!rig_int_fits(v))
    return rig_error_set(err, RIG_EREFUSED,
                         "a malformed program at byte %zu: an integer of more than 63 bits", *pos);
  *pos += 8;
  *out = v;
  return RIG_OK;
}

/* What a program keeps to run words received from another process. */
struct preceived {
  rig_point *points;   /* the frames' step points */
  rig_buffer **views;  /* per input: the view of the last run */
  rig_buffer **region; /* per input: what that view is of (retained) */
  uint64_t *range;     /* per input: that view's offset and length */
  int64_t *ints;       /* the frames' ints */
};

void rig_program_free_received(preceived *r, size_t ninputs) {
  if (!r) return;
  for (size_t i = 0; r->views && r->region && i < ninputs; i++) {
    rig_buffer_release(r->views[i]);
    rig_buffer_release(r->region[i]);
  }
  free(r->points);
  free(r->views);
  free(r->region);
  free(r->range);
  free(r->ints);
  free(r);
}

/* p's received part, made at its first use; under p->recv_lock. */
static rig_status received_part(rig_program *p, preceived **out, rig_error *err) {
  if (!p->received) {
    const rig_desc *d = p->desc;
    size_t ni = d->ninputs ? d->ninputs : 1;
    preceived *r = calloc(1, sizeof *r);
    if (r) {
      r->points = calloc(p->nsubmits ? p->nsubmits : 1, sizeof *r->points);
      r->views = calloc(ni, sizeof *r->views);
      r->region = calloc(ni, sizeof *r->region);
      r->range = calloc(ni * 2, sizeof *r->range);
      r->ints = calloc(d->ints ? (size_t)d->ints : 1, sizeof *r->ints);
    }
    if (!r || !r->points || !r->views || !r->region || !r->range || !r->ints) {
      rig_program_free_received(r, 0);
      return rig_error_set(err, RIG_ENOMEM, "out of memory for a received program");
    }
    p->received = r;
  }
  *out = p->received;
  return RIG_OK;
}

rig_status rig_program_load_received(const void *bytes, size_t len,
                                     rig_device *(*device)(void *ctx, int64_t id), void *device_ctx,
                                     const rig_rails *rails, rig_program **out, rig_error *err) {
  const uint8_t *b = bytes;
  if (len < REMOTE_MAGIC_LEN || memcmp(b, REMOTE_MAGIC, REMOTE_MAGIC_LEN) != 0)
    return rig_error_set(err, RIG_EREFUSED, "not a program another process loads");
  size_t pos = REMOTE_MAGIC_LEN;
  int64_t n;
  rig_status st = get_int(b, len, &pos, &n, err);
  if (st != RIG_OK) return st;
  if (n < 0 || (uint64_t)n > (len - pos) / 8)
    return rig_error_set(err, RIG_EREFUSED, "a malformed program at byte %zu: a count of %lld", pos,
                         (long long)n);
  rig_device **devs = calloc(n ? (size_t)n : 1, sizeof *devs);
  int64_t *ids = calloc(n ? (size_t)n : 1, sizeof *ids);
  st = devs && ids ? RIG_OK : rig_error_set(err, RIG_ENOMEM, "out of memory");
  for (int64_t i = 0; st == RIG_OK && i < n; i++) st = get_int(b, len, &pos, &ids[i], err);
  rig_desc *d = NULL;
  /* Another process made the bytes: what the decoder finds malformed, or a
   * rule they break, is a refusal. */
  if (st == RIG_OK && (st = rig_desc_of_bytes(b + pos, len - pos, &d, err)) != RIG_OK)
    st = rig_program_refused(err);
  for (int64_t i = 0; st == RIG_OK && i < n; i++)
    if (!(devs[i] = device(device_ctx, ids[i])))
      st = rig_error_set(err, RIG_EREFUSED, "no device %lld on this machine", (long long)ids[i]);
  if (st == RIG_OK) {
    st = rig_program_load(d, devs, (size_t)n, rails, out, err);
    if (st == RIG_EINVAL) st = rig_program_refused(err);
  }
  if (st == RIG_OK) {
    preceived *r;
    pthread_mutex_lock(&(*out)->recv_lock);
    st = received_part(*out, &r, err);
    pthread_mutex_unlock(&(*out)->recv_lock);
    if (st != RIG_OK) {
      rig_program_release(*out);
      *out = NULL;
    }
  }
  rig_desc_free(d);
  free(devs);
  free(ids);
  return st;
}

size_t rig_program_run_words_count(size_t ninputs, size_t ints) {
  return 1 + 3 * ninputs + 1 + ints;
}

void rig_program_run_words(uint64_t program_id, const rig_remote_input *inputs, size_t ninputs,
                           const int64_t *frame_ints, size_t m, size_t ints, uint64_t *words) {
  size_t w = 0;
  words[w++] = program_id;
  for (size_t i = 0; i < ninputs; i++) {
    words[w++] = inputs[i].id;
    words[w++] = inputs[i].offset;
    words[w++] = inputs[i].length;
  }
  words[w++] = m;
  /* Negative ints travel sign-extended, as two's complement words. */
  for (size_t i = 0; i < ints; i++) words[w++] = i < m ? (uint64_t)frame_ints[i] : 0;
}

typedef struct words {
  const uint8_t *b;
  size_t len, pos;
} words;

static rig_status next_word(words *w, uint64_t *out, rig_error *err) {
  if (w->len - w->pos < 8)
    return rig_error_set(err, RIG_EREFUSED, "a malformed run at byte %zu: a word past the end",
                         w->pos);
  *out = get64(w->b + w->pos);
  w->pos += 8;
  return RIG_OK;
}

/* The view of the run's input i, made again only when it changed. */
static rig_status input_view(preceived *r, size_t i, rig_buffer *region, uint64_t off, uint64_t len,
                             rig_error *err) {
  if (r->region[i] == region && r->range[2 * i] == off && r->range[2 * i + 1] == len) return RIG_OK;
  rig_buffer *v;
  rig_status st = rig_buffer_view(region, off, len, &v, err);
  if (st != RIG_OK) return st;
  rig_buffer_release(r->views[i]);
  rig_buffer_release(r->region[i]);
  r->views[i] = v;
  r->region[i] = rig_buffer_retain(region);
  r->range[2 * i] = off;
  r->range[2 * i + 1] = len;
  return RIG_OK;
}

rig_status rig_program_run_received(const void *bytes, size_t len,
                                    rig_program *(*program)(void *ctx, uint64_t id),
                                    rig_buffer *(*region)(void *ctx, uint64_t id), void *ctx,
                                    const rig_point *waits, size_t nwaits, rig_point *ends,
                                    size_t *nends, rig_error *err) {
  *nends = 0;
  words w = {bytes, len, 0};
  uint64_t id;
  rig_status st = next_word(&w, &id, err);
  if (st != RIG_OK) return st;
  rig_program *p = program(ctx, id);
  if (!p) return rig_error_set(err, RIG_EREFUSED, "no program of this entry");
  const rig_desc *d = p->desc;
  pthread_mutex_lock(&p->recv_lock);
  preceived *r;
  st = received_part(p, &r, err);
  for (size_t i = 0; st == RIG_OK && i < d->ninputs; i++) {
    uint64_t mid, off, n;
    if ((st = next_word(&w, &mid, err)) != RIG_OK || (st = next_word(&w, &off, err)) != RIG_OK ||
        (st = next_word(&w, &n, err)) != RIG_OK)
      break;
    rig_buffer *mem = region(ctx, mid);
    if (!mem) {
      st = rig_error_set(err, RIG_EREFUSED, "no memory %llu", (unsigned long long)mid);
      break;
    }
    uint64_t rlen = rig_buffer_length(mem);
    if (off > rlen || n > rlen - off) {
      st = rig_error_set(err, RIG_EREFUSED, "%llu bytes at %llu past memory %llu",
                         (unsigned long long)n, (unsigned long long)off, (unsigned long long)mid);
      break;
    }
    st = input_view(r, i, mem, off, n, err);
  }
  uint64_t m = 0;
  if (st == RIG_OK) st = next_word(&w, &m, err);
  if (st == RIG_OK && m > (uint64_t)d->ints)
    st = rig_error_set(err, RIG_EREFUSED, "%llu ints for a program of %lld", (unsigned long long)m,
                       (long long)d->ints);
  for (int64_t j = 0; st == RIG_OK && j < d->ints; j++) {
    uint64_t v;
    if ((st = next_word(&w, &v, err)) == RIG_OK && (uint64_t)j < m) r->ints[j] = (int64_t)v;
  }
  if (st == RIG_OK && w.pos != len)
    st = rig_error_set(err, RIG_EREFUSED, "a malformed run at byte %zu: %zu bytes after the run",
                       w.pos, len - w.pos);
  if (st == RIG_OK) {
    rig_frame f = {r->views, d->ninputs, r->ints, (size_t)m, r->points, p->nsubmits};
    st = rig_program_run(p, &f, waits, nwaits, ends, nends, err);
  }
  pthread_mutex_unlock(&p->recv_lock);
  return st;
}
