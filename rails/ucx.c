/* UCX as librig uses it: how its failures read, the settings of the
 * engine's context, and where UCX's own messages go.
 *
 * Settings. No memory of a job may be open to another uid: UCX's sysv
 * transport makes its segments (areas and its receive FIFOs) with mode
 * 0660, open to the owner's group, so the context never takes sysv; the
 * areas are allocated by the posix transport, whose files are made 0600
 * and, with UCX_POSIX_USE_PROC_LINK (UCX's default), unlinked at once and
 * shared as /proc/<pid>/fd/<fd>, which only a process allowed to ptrace the
 * owner opens (docs/rails.md, "Memory"). Allocation never falls back to
 * private memory a peer on the host cannot map: where posix is a
 * transport, an area is posix memory or is not made.
 *
 * Messages. UCX logs to stdout unless UCX_LOG_FILE says otherwise; stdout
 * is where a program's outputs may go, so at load librig sends UCX's log
 * to stderr, unless the user chose a log file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucs/config/global_opts.h>
#include <ucs/debug/log_def.h>
#include <unistd.h>

#include "base/env.h"
#include "base/log.h"
#include "rails_internal.h"

rig_status rig_ucx_error(rig_error *err, const char *what, ucs_status_t st) {
  return rig_error_set(err, RIG_ESYS, "UCX: %s: %s", what, ucs_status_string(st));
}

/* ---- the transports ---------------------------------------------------------- */

/* A token of a transports list without its ":aux" qualifier is `name`. */
static bool token_is(const char *tok, size_t n, const char *name) {
  const char *colon = memchr(tok, ':', n);
  size_t base = colon ? (size_t)(colon - tok) : n;
  return base == strlen(name) && strncmp(tok, name, base) == 0;
}

/* Appends `s` to out (of `size`), a comma before it unless out is empty. */
static bool append(char *out, size_t size, const char *s, size_t n) {
  size_t at = strlen(out), comma = at ? 1 : 0;
  if (at + comma + n + 1 > size) return false;
  if (comma) out[at++] = ',';
  memcpy(out + at, s, n);
  out[at + n] = '\0';
  return true;
}

/* The user's UCX_TLS (`user`, NULL when unset) without sysv, into out:
 * "all" and unset become "^sysv", an exclusion list ("^tcp") gains sysv,
 * and a list that names transports has the aliases that hold sysv (sm, shm,
 * mm) spelt out without it. *posix: whether posix is among them. A list
 * that names sysv itself is refused: the user asked for what librig does
 * not make. */
static rig_status rig_ucx_tls(const char *var, const char *user, char *out, size_t size,
                              bool *posix, rig_error *err) {
  out[0] = '\0';
  *posix = true;
  bool exclude = user && user[0] == '^';
  const char *list = exclude ? user + 1 : user;
  bool all = !user || !user[0], sysv_out = false;
  for (const char *t = list; t && *t && !all;) {
    size_t n = strcspn(t, ",");
    all |= !exclude && token_is(t, n, "all");
    sysv_out |= exclude && (token_is(t, n, "sysv") || token_is(t, n, "mm") ||
                            token_is(t, n, "sm") || token_is(t, n, "shm"));
    t += n + (t[n] == ',');
  }
  if (all) {
    snprintf(out, size, "^sysv");
    return RIG_OK;
  }
  if (exclude) {
    if ((size_t)snprintf(out, size, "%s%s", user, sysv_out ? "" : ",sysv") >= size)
      return rig_error_set(err, RIG_EINVAL, "%s is too long", var);
    for (const char *t = list; *t;) {
      size_t n = strcspn(t, ",");
      if (token_is(t, n, "posix") || token_is(t, n, "mm") || token_is(t, n, "sm") ||
          token_is(t, n, "shm"))
        *posix = false;
      t += n + (t[n] == ',');
    }
    return RIG_OK;
  }
  *posix = false;
  for (const char *t = list; *t;) {
    size_t n = strcspn(t, ",");
    const char *as = t;
    size_t len = n;
    if (token_is(t, n, "sysv"))
      return rig_error_set(err, RIG_EINVAL,
                           "%s=%s names sysv, whose segments the owner's group may attach "
                           "(mode 0660): name posix instead",
                           var, user);
    if (token_is(t, n, "sm") || token_is(t, n, "shm"))
      as = "posix,xpmem,knem,cma", len = strlen(as);
    else if (token_is(t, n, "mm"))
      as = "posix,xpmem", len = strlen(as);
    *posix |= as != t || token_is(t, n, "posix");
    if (n && !append(out, size, as, len))
      return rig_error_set(err, RIG_EINVAL, "%s is too long", var);
    t += n + (t[n] == ',');
  }
  return RIG_OK;
}

/* librig's transports as the user gave them: RIG_UCX_TLS where set, which
 * leaves UCX_TLS to an MPI that runs on UCX too (MPICH's ch4:ucx reads
 * it), else UCX_TLS. *var: which of the two. */
static const char *user_tls(const char **var) {
  const char *own = rig_env_get()->ucx_tls;
  *var = *own ? "RIG_UCX_TLS" : "UCX_TLS";
  return *own ? own : getenv("UCX_TLS");
}

rig_status rig_rail_ucx_tls(char *out, size_t size, rig_error *err) {
  bool shared;
  const char *var, *user = user_tls(&var);
  return rig_ucx_tls(var, user, out, size, &shared, err);
}

const char *rig_rail_ucx_tls_own(void) {
  const char *own = rig_env_get()->ucx_tls;
  return *own ? own : NULL;
}

rig_status rig_ucx_config(ucp_config_t **out, bool *shared, rig_error *err) {
  char tls[1024];
  const char *var, *user = user_tls(&var);
  rig_status st = rig_ucx_tls(var, user, tls, sizeof tls, shared, err);
  if (st != RIG_OK) return st;
  ucp_config_t *config;
  ucs_status_t us = ucp_config_read(NULL, NULL, &config);
  if (us != UCS_OK) return rig_ucx_error(err, "ucp_config_read", us);
  /* Without posix (UCX_TLS=tcp,self) nothing maps an area: private
   * memory, which no other process reaches either. */
  if ((us = ucp_config_modify(config, "TLS", tls)) != UCS_OK ||
      (us = ucp_config_modify(config, "ALLOC_PRIO", *shared ? "md:posix" : "mmap")) != UCS_OK) {
    ucp_config_release(config);
    return rig_ucx_error(err, "ucp_config_modify", us);
  }
  *out = config;
  return RIG_OK;
}

/* ---- messages -------------------------------------------------------------------- */

/* UCX's default format, through librig's log: a line per message. */
static ucs_log_func_rc_t to_stderr(const char *file, unsigned line, const char *function,
                                   ucs_log_level_t level,
                                   const ucs_log_component_config_t *comp_conf, const char *format,
                                   va_list ap) {
  (void)function;
  if (level > comp_conf->log_level && level != UCS_LOG_LEVEL_PRINT) return UCS_LOG_FUNC_RC_STOP;
  char message[1024], host[64] = "";
  vsnprintf(message, sizeof message, format, ap);
  gethostname(host, sizeof host - 1);
  struct timeval tv;
  gettimeofday(&tv, NULL);
  const char *base = strrchr(file, '/');
  rig_log_level ours = level <= UCS_LOG_LEVEL_ERROR  ? RIG_LOG_ERROR
                       : level <= UCS_LOG_LEVEL_WARN ? RIG_LOG_WARN
                       : level <= UCS_LOG_LEVEL_INFO ? RIG_LOG_INFO
                                                     : RIG_LOG_DEBUG;
  if (level == UCS_LOG_LEVEL_PRINT) ours = RIG_LOG_WARN;
  rig_log_raw(ours, "[%ld.%06ld] [%s:%d] %16s:%-4u %-4s %-5s %s", (long)tv.tv_sec, (long)tv.tv_usec,
              host, (int)getpid(), base ? base + 1 : file, line, comp_conf->name,
              ucs_log_level_names[level], message);
  return UCS_LOG_FUNC_RC_STOP;
}

/* At load: libucs, which librig needs, is loaded and configured first. */
__attribute__((constructor)) static void ucx_log_to_stderr(void) {
  if (!ucs_global_opts.log_file || !ucs_global_opts.log_file[0]) ucs_log_push_handler(to_stderr);
}
