/* A description's devices mapped to this machine's (rig_run.h): by name,
 * each checked against its device's arch, or by arch, each the next free
 * device of the family the arch names (the provider table's). progrun
 * maps a machine's devices with it, locally and in a job. */
#include <string.h>

#include "rig/rig_run.h"

static bool arch_is(rig_desc_string s, const char *arch) {
  return s.len == strlen(arch) && memcmp(s.bytes, arch, s.len) == 0;
}

/* An arch as messages show it: at most 64 bytes, anything outside printable
 * ASCII as '?' (descriptions come from anywhere). */
static const char *shown(rig_desc_string s, char buf[72]) {
  size_t n = s.len < 64 ? s.len : 64;
  for (size_t i = 0; i < n; i++) buf[i] = s.bytes[i] >= 32 && s.bytes[i] < 127 ? s.bytes[i] : '?';
  strcpy(buf + n, s.len > 64 ? "..." : "");
  return buf;
}

static bool taken(rig_device *const *out, size_t i, const rig_device *dev) {
  for (size_t k = 0; k < i; k++)
    if (out[k] == dev) return true;
  return false;
}

static rig_device *open_local(void *ctx, const char *name, rig_error *why) {
  (void)ctx;
  rig_device *d = NULL;
  return rig_device_open(name, &d, why) == RIG_OK ? d : NULL;
}

/* The next device of the family with arch `arch` not given to devices
 * before i. Devices are numbered from 0 without gaps, so the first name
 * that does not open ends the search; its refusal says why there is none
 * (a family of one device has one name). */
static rig_status next_free(rig_device_opener *open, void *ctx, size_t family, rig_desc_string arch,
                            rig_device **out, size_t i, rig_error *err) {
  char first[64], name[64], a[72];
  rig_error why = {0};
  unsigned n = 0, of_arch = 0;
  rig_family_device_name(family, 0, first, sizeof first);
  for (; n < 65536; n++) {
    rig_device *dev = NULL;
    rig_family_device_name(family, n, name, sizeof name);
    if ((n > 0 && strcmp(name, first) == 0) || !(dev = open(ctx, name, &why))) break;
    if (!arch_is(arch, rig_device_arch(dev))) continue;
    of_arch++;
    if (!taken(out, i, dev)) {
      out[i] = dev;
      return RIG_OK;
    }
  }
  if (n == 0)
    return rig_error_set(err, RIG_EREFUSED,
                         "device %zu: no device of arch \"%s\" on this machine (%s)", i,
                         shown(arch, a), why.message);
  if (of_arch == 0)
    return rig_error_set(err, RIG_EREFUSED, "device %zu: no device of arch \"%s\" on this machine",
                         i, shown(arch, a));
  return rig_error_set(err, RIG_EREFUSED,
                       "device %zu: no free device of arch \"%s\": this machine's %u %s devices "
                       "are taken by earlier ones (docs/environment.md says how to have more)",
                       i, shown(arch, a), of_arch, rig_family_name(family));
}

static rig_status by_name(const rig_desc *d, const char *const *names, size_t nnames,
                          const char *given_by, rig_device_opener *open, void *ctx,
                          rig_device **out, rig_error *err) {
  char a[72];
  if (nnames != d->ndevices)
    return rig_error_set(err, RIG_EINVAL, "%s: %zu devices for a program of %zu", given_by, nnames,
                         d->ndevices);
  for (size_t i = 0; i < nnames; i++) {
    rig_error why = {0};
    if (!names[i]) return rig_error_set(err, RIG_EINVAL, "%s: device %zu: no name", given_by, i);
    if (!(out[i] = open(ctx, names[i], &why)))
      return rig_error_set(err, RIG_EINVAL, "%s: %s", given_by, why.message);
    /* The load's own message (rig_program.h), told as the fault of what
     * named the device rather than the machine's. */
    if (!arch_is(d->devices[i], rig_device_arch(out[i])))
      return rig_error_set(err, RIG_EINVAL, "%s: device %zu: %s is \"%s\", not \"%s\"", given_by, i,
                           names[i], rig_device_arch(out[i]), shown(d->devices[i], a));
  }
  return RIG_OK;
}

rig_status rig_run_map_devices(const rig_desc *d, const char *const *names, size_t nnames,
                               const char *given_by, rig_device_opener *open, void *ctx,
                               rig_device **out, rig_error *err) {
  if (!open) open = open_local;
  for (size_t i = 0; i < d->ndevices; i++) out[i] = NULL;
  if (names) return by_name(d, names, nnames, given_by ? given_by : "devices", open, ctx, out, err);
  char a[72];
  for (size_t i = 0; i < d->ndevices; i++) {
    rig_desc_string arch = d->devices[i];
    /* The family whose arch prefix the arch has (the provider table). */
    char text[72];
    size_t n = arch.len < sizeof text - 1 ? arch.len : sizeof text - 1;
    if (n) memcpy(text, arch.bytes, n);
    text[n] = 0;
    int family = arch.len && memchr(arch.bytes, 0, arch.len) ? -1 : rig_family_of_arch(text);
    if (family < 0 || arch.len >= sizeof text)
      return rig_error_set(err, RIG_EREFUSED,
                           "device %zu: no device of arch \"%s\" on this machine", i,
                           shown(arch, a));
    rig_status st = next_free(open, ctx, (size_t)family, arch, out, i, err);
    if (st != RIG_OK) return st;
  }
  return RIG_OK;
}
