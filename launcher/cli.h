/* cli.h: what the files of the progrun command share: the exit codes, the
 * usage messages, and each subcommand's entry point. Only progrun prints;
 * the library below it only fills rig_error records. */
#ifndef RIG_CLI_H
#define RIG_CLI_H

#include <stdio.h>

#include "rig/rig_desc.h"

/* Exit codes (DISTRIBUTED.md, "progrun"). */
enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_FAIL = 1,  /* a job failed, or the command ran out of memory */
  CLI_EXIT_USAGE = 2, /* bad usage, a file that cannot be read or written, a
                         malformed description or one that breaks a rule */
};

/* A subcommand: argv[0] is its name, argv[1..argc) its arguments. Returns the
 * process's exit code. */
typedef int (*cli_command_fn)(int argc, char **argv);

/* The usage of every command, on f. */
void cli_print_usage(FILE *f);

/* Prints "progrun: <message>" and the usage on stderr; returns
 * CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "progrun: <message>" on stderr; returns `code`. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reads the description in `path`: its bytes (magic "rig.program\n") or its
 * JSON text, whose {"file": ...} paths are relative to the JSON file's
 * directory ("-" reads stdin, its files relative to the working
 * directory). Only decodes: no rule is checked. On failure prints why and
 * returns the exit code; returns CLI_EXIT_OK with *d set on success. */
int cli_read_desc(const char *path, rig_desc **d);

/* The subcommands of cli_desc.c. */
int cli_check(int argc, char **argv);
int cli_dump(int argc, char **argv);
int cli_pack(int argc, char **argv);

/* The readable listing of d (docs/cli.md, "dump"): every field, in a
 * stable layout. */
void cli_dump_desc(FILE *f, const rig_desc *d);

#endif
