/* Host code: what the host and cpu drivers share. Running a work's parts
 * as host code, loading ELF images from memory, page-aligned memory. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hostcode.h"

/* me: this thread's record of the work, its part set before each is run
 * (what a fault's handler names). */
static rig_status run_parts(const rig_work *w, rig_working *me, rig_error *err) {
  const rig_submission *s = w->sub;
  _Alignas(16) unsigned char params[RIG_MAX_PARAMS];
  size_t nparts = rig_submission_nparts(s);
  for (size_t i = 0; i < nparts; i++) {
    const rig_part *p = rig_submission_part(s, i);
    me->part = i;
    switch (p->kind) {
      case RIG_WORK_LAUNCH: {
        rig_work_params(w, i, params);
        uint32_t g[7];
        memcpy(g, rig_block_geometry(s, (void *)w->block, i), sizeof g);
        rig_pool_launch((rig_launch_fn *)(uintptr_t)p->u.launch.entry.value, params, g, g + 3,
                        g[6]);
        break;
      }
      case RIG_WORK_FILL: {
        rig_work_params(w, i, params);
        if (p->u.fill.ready) {
          uint64_t word[2];
          memcpy(word, params, sizeof word);
          ((rig_ready_fn *)(uintptr_t)p->u.fill.fn)((void *)(uintptr_t)word[0], word[1]);
        } else {
          int rc = ((rig_fill_fn *)(uintptr_t)p->u.fill.fn)(NULL, params, w->value);
          if (rc != 0)
            return rig_error_set(err, RIG_ELOST, "part %zu: a fill failed with %d", i, rc);
        }
        break;
      }
      case RIG_WORK_COPY: {
        uint64_t src, dst;
        rig_work_copy_ends(w, i, &src, &dst);
        if (p->u.copy.length)
          memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, p->u.copy.length);
        break;
      }
      case RIG_WORK_WORDS:
        return rig_error_set(err, RIG_ELOST, "part %zu: words are not host work", i);
    }
  }
  return RIG_OK;
}

rig_status rig_hostcode_run(const rig_work *w, rig_error *err) {
  if (!w->sub) {
    if (w->length) memmove((void *)(uintptr_t)w->dst, (const void *)(uintptr_t)w->src, w->length);
    return RIG_OK;
  }
  /* Marked while it runs, so that code it calls knows whose work it is. */
  rig_working me = {w->sub, rig_working_now(), 0};
  const rig_working *outer = rig_working_set(&me);
  rig_status st = run_parts(w, &me, err);
  rig_working_set(outer);
  return st;
}

/* ---- presence ------------------------------------------------------------- */

/* The mark and the loss are sequentially consistent (the core's loss is
 * too): either the thread sees the loss and runs nothing, or a release
 * after the loss sees the mark and keeps what the work uses. */
bool rig_presence_enter(rig_presence *p, rig_device *dev, uint64_t value) {
  atomic_store_explicit(&p->inside, value, memory_order_seq_cst);
  if (!rig_device_is_lost(dev, NULL)) return true;
  atomic_store_explicit(&p->inside, 0, memory_order_seq_cst);
  return false;
}

void rig_presence_leave(rig_presence *p, rig_device *dev) {
  atomic_store_explicit(&p->inside, 0, memory_order_seq_cst);
  if (rig_device_is_lost(dev, NULL)) rig_device_left(dev);
}

bool rig_presence_busy(const rig_presence *p, uint64_t value) {
  uint64_t v = atomic_load_explicit(&p->inside, memory_order_seq_cst);
  return v != 0 && v <= value;
}

/* ---- images ---------------------------------------------------------------- */

/* An image stays open on its memfd while loaded: the loader knows it by
 * the path /proc/self/fd/N, and a later image on a reused N would be taken
 * for this one. */
typedef struct host_image {
  void *dl;
  int fd;
} host_image;

/* Why bytes are no ELF shared object, or NULL when their header says they
 * are one: the loader's own words for it ("file too short", "invalid ELF
 * header") name the memfd, not what the bytes are. */
const char *rig_hostcode_not_a_shared_object(const void *bytes, size_t len) {
  if (len < SELFMAG || memcmp(bytes, ELFMAG, SELFMAG) != 0) return "no ELF magic";
  ElfW(Ehdr) h;
  if (len < sizeof h) return "shorter than an ELF header";
  memcpy(&h, bytes, sizeof h);
  if (h.e_type != ET_DYN) return "an ELF file of another type: link it with -shared";
  return NULL;
}

rig_status rig_hostcode_image_load(const char *device, const void *bytes, size_t len, void **image,
                                   rig_error *err) {
  const char *not_so = rig_hostcode_not_a_shared_object(bytes, len);
  if (not_so)
    return rig_error_set(err, RIG_EREFUSED, "%s: not an ELF shared object (%zu bytes: %s)", device,
                         len, not_so);
  host_image *im = malloc(sizeof *im);
  if (!im) return rig_error_set(err, RIG_ENOMEM, "%s: out of memory for an image", device);
  int fd = memfd_create("rig-image", MFD_CLOEXEC);
  if (fd < 0) {
    free(im);
    return rig_error_set(err, RIG_ESYS, "%s: memfd_create: %m", device);
  }
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, (const char *)bytes + done, len - done);
    if (n <= 0) {
      close(fd);
      free(im);
      return rig_error_set(err, RIG_ESYS, "%s: writing an image: %m", device);
    }
    done += (size_t)n;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  /* RTLD_LOCAL: two images may define the same names. */
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    close(fd);
    free(im);
    /* dlerror names the memfd's path first; keep the loader's reason. */
    const char *colon = why ? strstr(why, ": ") : NULL;
    return rig_error_set(err, RIG_EREFUSED, "%s: %s", device,
                         colon ? colon + 2
                         : why ? why
                               : "the loader refused the image");
  }
  im->dl = h;
  im->fd = fd;
  *image = im;
  return RIG_OK;
}

rig_status rig_hostcode_image_entry(const char *device, void *image, const char *name, size_t len,
                                    rig_entry *out, rig_error *err) {
  host_image *im = image;
  char cname[256];
  if (len >= sizeof cname || memchr(name, 0, len))
    return rig_error_set(err, RIG_EREFUSED, "%s: no function \"%.*s\"", device,
                         (int)(len > 200 ? 200 : len), name);
  memcpy(cname, name, len);
  cname[len] = 0;
  dlerror();
  void *f = dlsym(im->dl, cname);
  if (!f) return rig_error_set(err, RIG_EREFUSED, "%s: no function \"%s\"", device, cname);
  out->value = (uint64_t)(uintptr_t)f;
  out->max_threads = 0; /* host code loops over its threads itself: no bound */
  return RIG_OK;
}

void rig_hostcode_image_unload(void *image) {
  host_image *im = image;
  dlclose(im->dl);
  close(im->fd);
  free(im);
}

/* ---- memory ---------------------------------------------------------------- */

rig_status rig_hostcode_alloc(uint64_t bytes, rig_mem_info *out, rig_error *err) {
  long page = sysconf(_SC_PAGESIZE);
  size_t n = bytes ? (size_t)bytes : 1;
  if (bytes > SIZE_MAX - (size_t)page)
    return rig_error_set(err, RIG_ENOMEM, "%llu bytes", (unsigned long long)bytes);
  n = (n + (size_t)page - 1) & ~((size_t)page - 1);
  void *p = NULL;
  if (posix_memalign(&p, (size_t)page, n) != 0)
    return rig_error_set(err, RIG_ENOMEM, "out of memory for %llu bytes",
                         (unsigned long long)bytes);
  memset(p, 0, n);
  out->address = out->handle = (uint64_t)(uintptr_t)p;
  out->host = p;
  out->driver = NULL;
  return RIG_OK;
}

void rig_hostcode_free(const rig_mem_info *mem) {
  free(mem->host);
}
