/* cli_help.h: progrun's help, one text for every form it takes: `progrun
 * --help`, each command's `progrun CMD --help` (and `progrun help CMD`),
 * the man page and the bash completion. The last two are made at build
 * time from the same table by progrun_doc (help_doc.c), so that no form
 * can drift from the others. */
#ifndef RIG_CLI_HELP_H
#define RIG_CLI_HELP_H

#include <stddef.h>
#include <stdio.h>

/* An option: `--runs N`, `-q, --quiet`. */
typedef struct cli_help_option {
  const char *name;  /* "--runs"; NULL ends a list */
  const char *alias; /* "-q", or NULL */
  const char *arg;   /* "N", "PATH", or NULL for a flag */
  int path;          /* whether its value names a file (completion offers files) */
  const char *what;
} cli_help_option;

typedef struct cli_help {
  const char *name;
  const char *synopsis[3];        /* after "progrun ", NULL-ended */
  const char *summary;            /* its line in the overview */
  const char *text;               /* what it does; paragraphs apart by "\n\n", unwrapped */
  int file;                       /* whether it takes FILE (completion offers files) */
  const cli_help_option *options; /* ended by a NULL name */
} cli_help;

/* Every command's help, in the overview's order. */
extern const cli_help cli_helps[];
extern const size_t cli_nhelps;
/* The options of progrun itself (-h, -V). */
extern const cli_help_option cli_help_global[];
/* What every command's help ends with. */
extern const char cli_help_exit_status[];
/* What FILE is, under the overview. */
extern const char cli_help_file[];

/* The help of the command `name`, or NULL. */
const cli_help *cli_help_of(const char *name);
/* `progrun --help`: every command's synopsis and summary, wrapped at 80
 * columns. */
void cli_help_overview(FILE *f);
/* `progrun CMD --help`: its synopsis, what it does, its options. */
void cli_help_print(FILE *f, const cli_help *h);

#endif
