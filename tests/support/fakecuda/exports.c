/* exports.c: gives each entry point fc_<field> the CUDA symbol names
 * RIG_CUDA_FUNCTIONS lists for it (both where it lists two, with the same
 * behaviour). Part of a test double of the CUDA driver API, for the tests
 * only. The names are string literals in the X-macro, so each symbol is a
 * one-instruction jump written in assembly; the signature stays the one
 * cuda_api.h declares for fc_<field>. */
#include "fakecuda_internal.h"

#if defined(__x86_64__)
#if defined(__CET__)
#define FC_LANDING "endbr64\n"
#else
#define FC_LANDING ""
#endif
#define FC_JUMP(target) "jmp " target "\n"
#elif defined(__aarch64__)
#if defined(__ARM_FEATURE_BTI_DEFAULT)
#define FC_LANDING "bti c\n"
#else
#define FC_LANDING ""
#endif
#define FC_JUMP(target) "b " target "\n"
#else
#error "fakecuda: unknown host machine"
#endif

#define FC_SYMBOL(field, sym)                                                                      \
  __asm__(".text\n.p2align 4\n.globl " sym "\n.type " sym ", %function\n" sym                      \
          ":\n" FC_LANDING FC_JUMP("fc_" #field) ".size " sym ", .-" sym "\n");
#define FC_ONE(field, a)                     FC_SYMBOL(field, a)
#define FC_TWO(field, a, b)                  FC_SYMBOL(field, a) FC_SYMBOL(field, b)
#define FC_PICK(_1, _2, which, ...)          which
#define FC_NAMES(field, ...)                 FC_PICK(__VA_ARGS__, FC_TWO, FC_ONE, )(field, __VA_ARGS__)
#define FC_UNPAREN(...)                      __VA_ARGS__
#define FC_EXPORT(ret, field, names, params) FC_NAMES(field, FC_UNPAREN names)

RIG_CUDA_FUNCTIONS(FC_EXPORT)
