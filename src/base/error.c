/* The error record: formatting into a fixed buffer, never allocating. */
#include <stdio.h>
#include <string.h>

#include "rig/rig_base.h"

const char *rig_status_name(rig_status s) {
  switch (s) {
    case RIG_OK:
      return "RIG_OK";
    case RIG_EINVAL:
      return "RIG_EINVAL";
    case RIG_EREFUSED:
      return "RIG_EREFUSED";
    case RIG_ENOMEM:
      return "RIG_ENOMEM";
    case RIG_ELOST:
      return "RIG_ELOST";
    case RIG_EMALFORMED:
      return "RIG_EMALFORMED";
    case RIG_ESYS:
      return "RIG_ESYS";
    case RIG_EJOB:
      return "RIG_EJOB";
  }
  return "RIG_E?";
}

static void mark_cut(char *buf, int wanted) {
  if (wanted >= RIG_ERROR_MESSAGE_MAX) memcpy(buf + RIG_ERROR_MESSAGE_MAX - 4, "...", 4);
}

rig_status rig_error_setv(rig_error *err, rig_status code, const char *fmt, va_list ap) {
  if (!err) return code;
  err->code = code;
  int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
  if (n < 0) err->message[0] = '\0';
  mark_cut(err->message, n);
  return code;
}

rig_status rig_error_set(rig_error *err, rig_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  rig_error_setv(err, code, fmt, ap);
  va_end(ap);
  return code;
}

rig_status rig_error_prefix(rig_error *err, const char *fmt, ...) {
  if (!err) return RIG_OK;
  char prefix[RIG_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  if (n < 0) return err->code;
  char old[RIG_ERROR_MESSAGE_MAX];
  memcpy(old, err->message, sizeof old);
  int m = snprintf(err->message, sizeof err->message, "%s: %s", prefix, old);
  mark_cut(err->message, m);
  return err->code;
}
