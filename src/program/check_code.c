/* What a load would refuse that is found without a device (rig_program.h,
 * rig_desc_check_code): archs that are device names, images that are no
 * image of their device's arch, and functions their images do not
 * export. Each family's provider reads its own images
 * (rig_image_functions); none of their code runs. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "rig/rig_core.h"
#include "rig/rig_program.h"

/* The names an image exports, as one buffer of NUL-ended names. */
typedef struct exports {
  rig_array names; /* of char */
  bool known;      /* the family can tell (else every name passes) */
  bool oom;
} exports;

static void add_name(void *ctx, const char *name) {
  exports *e = ctx;
  if (!e->oom && !rig_array_append(&e->names, name, strlen(name) + 1)) e->oom = true;
}

static const char *names_of(const exports *e) {
  return e->names.n ? rig_array_at(&e->names, 0) : "";
}

static bool exported(const exports *e, rig_desc_string name) {
  const char *names = names_of(e);
  for (size_t at = 0; at < e->names.n; at += strlen(names + at) + 1)
    if (strlen(names + at) == name.len && memcmp(names + at, name.bytes, name.len) == 0)
      return true;
  return false;
}

/* "a, b, c" of what e exports; "..." ends a list cut to fit `size`. */
static void list_exports(const exports *e, char *out, size_t size) {
  const char *names = names_of(e);
  size_t w = 0;
  snprintf(out, size, "%s", e->names.n ? "" : "nothing");
  for (size_t at = 0; at < e->names.n; at += strlen(names + at) + 1) {
    const char *name = names + at;
    /* Room for this name, its comma and a last ", ..." */
    if (w + strlen(name) + 2 + 6 >= size) {
      snprintf(out + w, size - w, "%s...", w ? ", " : "");
      return;
    }
    w += (size_t)snprintf(out + w, size - w, "%s%s", w ? ", " : "", name);
  }
}

typedef struct code_check {
  const rig_desc *d;
  exports *images;
  int64_t step; /* the next step's number, in pre-order, as rig_desc_check counts */
  rig_error *err;
} code_check;

static rig_status no_function(code_check *c, int64_t s, int64_t image, rig_desc_string name) {
  char list[256];
  list_exports(&c->images[image], list, sizeof list);
  return rig_error_set(
      c->err, RIG_EREFUSED,
      "step %" PRId64 ": image %" PRId64 " has no function \"%.*s\" (it exports: %s)", s, image,
      (int)(name.len > 200 ? 200 : name.len), (const char *)name.bytes, list);
}

/* A function named of image k, when the image's family can tell. */
static rig_status look_up(code_check *c, int64_t s, int64_t k, rig_desc_string name) {
  if (k < 0 || (uint64_t)k >= c->d->nimages || !c->images[k].known) return RIG_OK;
  return exported(&c->images[k], name) ? RIG_OK : no_function(c, s, k, name);
}

static rig_status check_steps(code_check *c, const rig_desc_steps *steps) {
  for (size_t i = 0; i < steps->n; i++) {
    const rig_desc_step *st = &steps->items[i];
    int64_t s = c->step++;
    if (st->tag == RIG_STEP_LOOP) {
      rig_status r = check_steps(c, &st->u.loop.body);
      if (r != RIG_OK) return r;
      continue;
    }
    if (st->tag != RIG_STEP_SUBMIT) continue;
    const rig_desc_submit *sub = &st->u.submit;
    for (size_t p = 0; p < sub->nparts; p++) {
      const rig_desc_part *part = &sub->parts[p];
      rig_status r = RIG_OK;
      if (part->tag == RIG_PART_LAUNCH)
        r = look_up(c, s, part->u.launch.image, part->u.launch.name);
      else if (part->tag == RIG_PART_FILL && part->u.fill.fill.tag == RIG_LEAF_ENTRY)
        r = look_up(c, s, part->u.fill.fill.u.entry.image, part->u.fill.fill.u.entry.name);
      if (r != RIG_OK) return r;
    }
  }
  return RIG_OK;
}

/* Device i's arch: one that names a device ("host", "cpu:0") is the
 * likely slip of a description written by hand. */
static rig_status check_arch(size_t i, rig_desc_string arch, rig_error *err) {
  char a[64];
  if (arch.len >= sizeof a || memchr(arch.bytes, '\0', arch.len)) return RIG_OK;
  memcpy(a, arch.bytes, arch.len);
  a[arch.len] = '\0';
  if (rig_family_of_device_name(a) >= 0)
    return rig_error_set(err, RIG_EINVAL,
                         "devices[%zu]: \"%s\" names a device, not an arch: a description names "
                         "the arch of each device (this machine's host is %s; progrun info lists "
                         "every device's)",
                         i, a, rig_host_isa());
  return RIG_OK;
}

rig_status rig_desc_check_code(const rig_desc *d, rig_error *err) {
  for (size_t i = 0; i < d->ndevices; i++) {
    rig_status r = check_arch(i, d->devices[i], err);
    if (r != RIG_OK) return r;
  }
  code_check c = {d, calloc(d->nimages + 1, sizeof *c.images), 0, err};
  if (!c.images) return rig_error_set(err, RIG_ENOMEM, "out of memory checking images");
  for (size_t k = 0; k < d->nimages; k++) rig_array_init(&c.images[k].names, 1, 0);
  rig_status r = RIG_OK;
  for (size_t k = 0; r == RIG_OK && k < d->nimages; k++) {
    const rig_desc_image *im = &d->images[k];
    if (im->device < 0 || (uint64_t)im->device >= d->ndevices) continue; /* rig_desc_check's */
    rig_desc_string arch = d->devices[im->device];
    char a[64];
    if (arch.len >= sizeof a) continue;
    memcpy(a, arch.bytes, arch.len);
    a[arch.len] = '\0';
    rig_error why = {0};
    r = rig_image_functions(a, im->binary.bytes.bytes, im->binary.bytes.len, add_name, &c.images[k],
                            &c.images[k].known, &why);
    if (r == RIG_EINVAL) {
      r = RIG_OK; /* an arch of no family here: another machine's to judge */
      c.images[k].known = false;
    } else if (r != RIG_OK) {
      rig_error_set(err, r, "image %zu (device %" PRId64 ", %s): %s", k, im->device, a,
                    why.message);
    } else if (c.images[k].oom) {
      r = rig_error_set(err, RIG_ENOMEM, "out of memory checking image %zu", k);
    }
  }
  if (r == RIG_OK) r = check_steps(&c, &d->steps);
  for (size_t k = 0; k < d->nimages; k++) rig_array_free(&c.images[k].names);
  free(c.images);
  return r;
}
