/* assert.h: assertions of librig's own invariants (as UCX's ucs_assert):
 * checked in debug builds, compiled out where NDEBUG is defined (the
 * release and RelWithDebInfo builds), where the condition is not even
 * evaluated. Never for input: a bad input gets an error. Private to librig
 * (never installed). */
#ifndef RIG_BASE_ASSERT_H
#define RIG_BASE_ASSERT_H

/* Prints "librig: <file>:<line>: <function>: assertion `<what>` failed"
 * on stderr, then aborts. */
_Noreturn void rig_assert_fail(const char *what, const char *file, int line, const char *function);

#ifdef NDEBUG
#define rig_assert(cond) ((void)sizeof(!(cond)))
#else
#define rig_assert(cond) ((cond) ? (void)0 : rig_assert_fail(#cond, __FILE__, __LINE__, __func__))
#endif

#endif
